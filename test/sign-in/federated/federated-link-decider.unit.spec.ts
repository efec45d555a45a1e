import { expect } from 'chai';
import { deciderSpec } from '../../support/given-when-then.js';
import { ConflictError, ValidationError } from '../../../shared/errors.js';
import type { FederatedIdentityLinked, PasskeyRegistered } from '../../../shared/oauth/oauth-events.js';
import { federatedLinkDecider, type FederatedLinkCommand } from '../../../shared/sign-in/federated/federated-link-decider.js';
import { fold } from '../../../shared/domain/decider.js';
import { expectSchemaValid } from '../../oauth/oauth-fixtures.js';

const spec = deciderSpec(federatedLinkDecider);
const ISSUER = 'https://idp.example.com';

const linked = (subject = 'sub-1', issuer = ISSUER): FederatedIdentityLinked => ({
  type: 'FederatedIdentityLinked',
  data: { userId: 7, orgId: 3, issuer, subject },
});
const link = (subject = 'sub-1', issuer = ISSUER): FederatedLinkCommand => ({ type: 'LinkFederatedIdentity', data: linked(subject, issuer).data });

describe('federated link decider', () => {
  it('links an identity', () => {
    expectSchemaValid(spec.given([]).when(link()).then([linked()]));
  });

  it('records nothing when the identity is already linked (a racing second callback)', () => {
    spec.given([linked()]).when(link()).thenNothing();
  });

  it('refuses another subject of an issuer already linked', () => {
    spec.given([linked('sub-1')]).when(link('sub-2')).thenThrows(ConflictError);
  });

  it('links accounts of different issuers', () => {
    spec.given([linked('sub-1')]).when(link('sub-1', 'https://other-idp.example.com')).then([linked('sub-1', 'https://other-idp.example.com')]);
  });

  it('refuses a malformed issuer or subject', () => {
    spec.given([]).when(link('sub', 'idp.example.com')).thenThrows(ValidationError);
    spec.given([]).when(link('')).thenThrows(ValidationError);
    spec.given([]).when(link('x'.repeat(256))).thenThrows(ValidationError);
  });

  it('ignores the other events of the credentials stream', () => {
    const passkey: PasskeyRegistered = {
      type: 'PasskeyRegistered',
      data: { userId: 7, credentialId: 'abc', publicKey: 'def', counter: 0, transports: [] },
    };
    expect(fold(federatedLinkDecider, [passkey, linked()]).subjects).to.deep.equal(new Map([[ISSUER, 'sub-1']]));
  });
});
