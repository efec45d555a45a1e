// Sample data for the OAuth tests, built the way the endpoints will build it.
import { expect } from 'chai';
import type { EventShape } from '../../shared/domain/decider.js';
import type { OAuthClient } from '../../shared/oauth/client-decider.js';
import { oauthEventErrors, type GrantFacts } from '../../shared/oauth/oauth-events.js';
import { s256Challenge } from '../../shared/oauth/pkce.js';
import { sha256Hex } from '../../shared/oauth/opaque-credentials.js';

export const ISSUER = 'https://id.example.test';

export const PUBLIC_CLIENT: OAuthClient = {
  clientId: `svc_${'a'.repeat(32)}`,
  orgId: 7,
  name: 'Door App',
  clientType: 'public',
  secretHash: null,
  redirectUris: ['https://app.example.com/callback', 'http://127.0.0.1/native/cb', 'com.example.app:/oauth2redirect'],
  postLogoutRedirectUris: ['https://app.example.com/bye'],
  allowedScopes: ['openid', 'profile', 'email', 'offline_access', 'passes:read', 'passes:write'],
};

export const CLIENT_SECRET = 'Zm9vYmFyYmF6cXV4LXNlY3JldC0yNTYtYml0cy12YWx1ZQ';

export const CONFIDENTIAL_CLIENT: OAuthClient = {
  clientId: `svc_${'b'.repeat(32)}`,
  orgId: 7,
  name: 'Reception Backend',
  clientType: 'confidential',
  secretHash: sha256Hex(CLIENT_SECRET),
  redirectUris: ['https://backend.example.com/cb?tenant=7'],
  postLogoutRedirectUris: [],
  allowedScopes: ['openid', 'profile', 'email', 'offline_access', 'passes:read', 'invites:read'],
};

export const directory = (...clients: OAuthClient[]) => ({
  async findClient(clientId: string) {
    return clients.find((c) => c.clientId === clientId) ?? null;
  },
});

export const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
export const CHALLENGE = s256Challenge(VERIFIER);

export const FAMILY_ID = '0123456789abcdef0123456789abcdef';
export const SID = 'sess_0123456789abcdef';

export const grant: GrantFacts = {
  clientId: PUBLIC_CLIENT.clientId,
  orgId: 7,
  userId: 42,
  scopes: ['openid', 'profile', 'offline_access'],
  authTime: '2025-06-01T10:00:00.000Z',
  amr: ['pwd', 'otp', 'mfa'],
  sid: SID,
};

/** Each event the decider produced would pass the append-time schema validation. */
export function expectSchemaValid(events: readonly EventShape[]): void {
  for (const event of events) expect(oauthEventErrors(event), event.type).to.deep.equal([]);
}
