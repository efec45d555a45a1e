import { expect } from 'chai';
import { fold } from '../../shared/domain/decider.js';
import { ValidationError } from '../../shared/errors.js';
import type { OAuthConsentGranted } from '../../shared/oauth/oauth-events.js';
import type { OAuthScope } from '../../shared/oauth/scopes.js';
import { consentDecider, rememberedScopes, type ConsentCommand } from '../../shared/sign-in/consent-decider.js';
import { deciderSpec } from '../support/given-when-then.js';
import { PUBLIC_CLIENT, CONFIDENTIAL_CLIENT, expectSchemaValid } from '../oauth/oauth-fixtures.js';

const spec = deciderSpec(consentDecider);
const A = PUBLIC_CLIENT.clientId;
const B = CONFIDENTIAL_CLIENT.clientId;
const granted = (clientId: string, scopes: OAuthScope[]): OAuthConsentGranted => ({ type: 'OAuthConsentGranted', data: { userId: 42, clientId, scopes } });
const grant = (clientId: string, scopes: OAuthScope[]): ConsentCommand => ({ type: 'GrantConsent', data: { userId: 42, clientId, scopes } });

describe('consent decider', () => {
  it('given no consent, records the granted scopes in canonical order (schema-valid)', () => {
    expectSchemaValid(spec.given([]).when(grant(A, ['profile', 'openid'])).then([granted(A, ['openid', 'profile'])]));
  });

  it('records the whole requested set when it adds a scope', () => {
    spec.given([granted(A, ['openid'])]).when(grant(A, ['openid', 'email'])).then([granted(A, ['openid', 'email'])]);
  });

  it('records nothing when every scope was already granted to that client', () => {
    spec.given([granted(A, ['openid', 'profile'])]).when(grant(A, ['profile'])).thenNothing();
  });

  it('keeps clients apart: a grant to one client is nothing for another', () => {
    spec.given([granted(A, ['openid', 'profile'])]).when(grant(B, ['openid'])).then([granted(B, ['openid'])]);
  });

  it('refuses an empty or unknown scope list and a malformed client id', () => {
    spec.given([]).when(grant(A, [])).thenThrows(ValidationError);
    spec.given([]).when(grant(A, ['openid', 'admin' as OAuthScope])).thenThrows(ValidationError);
    spec.given([]).when(grant('svc_nope', ['openid'])).thenThrows(ValidationError);
  });

  it('remembers the union of every grant per client', () => {
    const state = fold(consentDecider, [granted(A, ['openid']), granted(B, ['email']), granted(A, ['passes:read', 'openid'])]);
    expect(rememberedScopes(state, A)).to.deep.equal(['openid', 'passes:read']);
    expect(rememberedScopes(state, B)).to.deep.equal(['email']);
    expect(rememberedScopes(state, `svc_${'c'.repeat(32)}`)).to.deep.equal([]);
  });
});
