// Rotating a confidential client's secret: only its hash enters the log, the old one stops, a
// public client has none to rotate, another organization's client is 404.
import { expect } from 'chai';
import { oauthClientDecider, type OAuthClientCommand } from '../../shared/oauth/client-decider.js';
import type { OAuthClientEvent } from '../../shared/oauth/oauth-events.js';
import { sha256Hex } from '../../shared/oauth/opaque-credentials.js';
import { ConflictError, NotFoundError, ValidationError } from '../../shared/errors.js';
import { deciderSpec } from '../support/given-when-then.js';

const spec = deciderSpec(oauthClientDecider);
const CLIENT = `svc_${'a'.repeat(32)}`;
const registered = (clientType: 'public' | 'confidential'): OAuthClientEvent => ({
  type: 'OAuthClientRegistered',
  data: {
    clientId: CLIENT,
    orgId: 7,
    name: 'Reception',
    clientType,
    secretHash: clientType === 'confidential' ? sha256Hex('old') : null,
    redirectUris: ['https://a.example/cb'],
    postLogoutRedirectUris: [],
    allowedScopes: ['openid'],
  },
});
const rotate = (secretHash: string, orgId = 7): OAuthClientCommand => ({ type: 'RotateOAuthClientSecret', data: { orgId, clientId: CLIENT, secretHash } });

describe('OAuth client decider: secret rotation', () => {
  it('records the new hash, and the client then has it', () => {
    const hash = sha256Hex('new');
    spec.given([registered('confidential')]).when(rotate(hash)).thenInspect((events, state) => {
      expect(events).to.deep.equal([{ type: 'OAuthClientSecretRotated', data: { clientId: CLIENT, orgId: 7, secretHash: hash } }]);
      expect(state.clients.get(CLIENT)?.secretHash).to.equal(hash);
    });
  });

  it('refuses a raw secret, a public client, and another organization', () => {
    spec.given([registered('confidential')]).when(rotate('the-secret-itself')).thenThrows(ValidationError);
    spec.given([registered('public')]).when(rotate(sha256Hex('new'))).thenThrows(ConflictError);
    spec.given([registered('confidential')]).when(rotate(sha256Hex('new'), 8)).thenThrows(NotFoundError);
  });
});
