// Sample data for the OAuth tests, built the way the endpoints will build it.
import { expect } from 'chai';
import type { EventShape } from '../../shared/domain/decider.js';
import type { OAuthClient } from '../../shared/oauth/client-decider.js';
import type { GrantFacts, OAuthEvent } from '../../shared/oauth/oauth-events.js';
import { eventDataErrors } from '../../shared/domain/event-schemas.js';
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
  for (const event of events) expect(eventDataErrors(event), event.type).to.deep.equal([]);
}

const SEALED = { keyId: 'k1', iv: 'AAAAAAAAAAAAAAAA', ciphertext: 'c2VjcmV0', tag: 'AAAAAAAAAAAAAAAAAAAAAA' };

/** One valid event of each sign-in, consent, credential and invitation type. */
export const SIGN_IN_SAMPLES: OAuthEvent[] = [
  {
    type: 'SignInSessionStarted',
    data: { sessionHash: sha256Hex('cookie'), sid: SID, userId: 42, orgId: 7, authTime: '2025-06-01T10:00:00.000Z', amr: ['pwd'] },
  },
  { type: 'SignInSessionEnded', data: { sessionHash: sha256Hex('cookie'), sid: SID, reason: 'logout' } },
  { type: 'OAuthConsentGranted', data: { userId: 42, clientId: PUBLIC_CLIENT.clientId, scopes: ['openid', 'email'] } },
  { type: 'TotpEnrolled', data: { userId: 42, secret: SEALED } },
  { type: 'RecoveryCodesIssued', data: { userId: 42, codeHashes: [sha256Hex('r1'), sha256Hex('r2')] } },
  { type: 'RecoveryCodeUsed', data: { userId: 42, codeHash: sha256Hex('r1') } },
  { type: 'TotpCodeAccepted', data: { userId: 42, timeStep: 58_333_333 } },
  {
    type: 'PasskeyRegistered',
    data: { userId: 42, credentialId: 'Y3JlZA', publicKey: 'cHVibGlj', counter: 0, transports: ['internal', 'hybrid'] },
  },
  { type: 'PasskeyUsed', data: { userId: 42, credentialId: 'Y3JlZA', counter: 3 } },
  { type: 'PasskeyRemoved', data: { userId: 42, credentialId: 'Y3JlZA' } },
  { type: 'FederatedIdentityLinked', data: { userId: 42, orgId: 7, issuer: 'https://upstream.example', subject: 'abc' } },
  { type: 'InvitationCreated', data: { inviteId: 5, orgId: 7, email: 'guest@example.com', userId: null, role: 'self_invite' } },
  { type: 'InvitationAccepted', data: { inviteId: 5, orgId: 7, userId: 12, role: 'self_invite' } },
  { type: 'InvitationDeclined', data: { inviteId: 6, orgId: 7, userId: 12 } },
  { type: 'InvitationCancelled', data: { inviteId: 8, orgId: 7 } },
];

const HX = sha256Hex('x');
/** One valid event of every OAuth type. */
export const OAUTH_SAMPLES: OAuthEvent[] = [
  {
    type: 'OAuthClientRegistered',
    data: {
      clientId: CONFIDENTIAL_CLIENT.clientId,
      orgId: 7,
      name: 'Reception',
      clientType: 'confidential',
      secretHash: HX,
      redirectUris: ['https://a.example/cb'],
      postLogoutRedirectUris: [],
      allowedScopes: ['openid'],
    },
  },
  { type: 'OAuthClientDeleted', data: { clientId: PUBLIC_CLIENT.clientId, orgId: 7 } },
  { type: 'OAuthClientSecretRotated', data: { clientId: PUBLIC_CLIENT.clientId, orgId: 7, secretHash: HX } },
  {
    type: 'AuthorizationCodeIssued',
    data: { ...grant, codeHash: HX, familyId: FAMILY_ID, redirectUri: 'https://a.example/cb', codeChallenge: CHALLENGE, nonce: null, expiresAt: '2025-06-01T10:01:00.000Z' },
  },
  { type: 'AuthorizationCodeRedeemed', data: { codeHash: HX, familyId: FAMILY_ID, clientId: grant.clientId } },
  { type: 'AuthorizationCodeReplayed', data: { codeHash: HX, familyId: FAMILY_ID, clientId: grant.clientId } },
  { type: 'TokenFamilyStarted', data: { ...grant, familyId: FAMILY_ID, codeHash: HX, refreshTokenHash: HX, expiresAt: '2025-07-01T10:00:00.000Z' } },
  { type: 'RefreshTokenRotated', data: { familyId: FAMILY_ID, spentTokenHash: HX, newTokenHash: sha256Hex('y') } },
  { type: 'TokenFamilyRevoked', data: { familyId: FAMILY_ID, reason: 'refresh_token_replay' } },
  ...SIGN_IN_SAMPLES,
];
