// The OAuth and sign-in events: data shapes and their JSON Schemas (additionalProperties: false),
// which the one event catalogue (shared/domain/event-schemas.ts) validates on append and read. No secret is ever in an event: authorization codes, refresh tokens and client secrets
// appear only as SHA-256 hashes (see opaque-credentials.ts for why SHA-256 suffices), and every
// hash field is constrained to 64 hex characters so a raw credential cannot be appended by mistake.
//
// Streams (one consistency boundary each):
//   oauth-clients-{orgId}        OAuthClientRegistered, OAuthClientSecretRotated, OAuthClientDeleted  (the 50-per-organization cap)
//   authorization-code-{hash}    AuthorizationCodeIssued, AuthorizationCodeRedeemed, AuthorizationCodeReplayed
//   token-family-{familyId}      TokenFamilyStarted, RefreshTokenRotated, TokenFamilyRevoked
//   signin-session-{hash}        SignInSessionStarted, SignInSessionEnded  (hash of the cookie secret)
//   oauth-consents-{userId}      OAuthConsentGranted  (remembered per user and client)
//   user-credentials-{userId}    TotpEnrolled, RecoveryCodesIssued, RecoveryCodeUsed, TotpCodeAccepted,
//                                PasskeyRegistered, PasskeyUsed, PasskeyRemoved, FederatedIdentityLinked
//   invitation-{inviteId}        InvitationCreated, InvitationAccepted, InvitationDeclined, InvitationCancelled
//
// Signing keys are not events: see signing-keys.ts.
//
// The nonce is kept as given, not hashed: it must be copied verbatim into the id_token at code
// redemption, and it is not a credential (it only lets the relying party tie an id_token to its
// own request; knowing it grants nothing). The code_challenge is already a hash of the verifier.
import { FAMILY_ID_PATTERN, SHA256_HEX_PATTERN } from './opaque-credentials.js';
import { OAUTH_SCOPES, type OAuthScope } from './scopes.js';

export type OAuthClientType = 'public' | 'confidential';

/**
 * Authentication method references (RFC 8176) this service can produce; `fed` (federated sign-in)
 * is not registered by RFC 8176 but asked for by the issue and used by several providers.
 */
export const AMR_VALUES = ['pwd', 'otp', 'mfa', 'hwk', 'swk', 'user', 'pin', 'fed'] as const;
export type AuthenticationMethod = (typeof AMR_VALUES)[number];

export const TOKEN_FAMILY_REVOCATION_REASONS = [
  /** A spent refresh token was presented again (or two refreshes raced): RFC 9700 §4.14.2. */
  'refresh_token_replay',
  /** The family's authorization code was redeemed a second time: RFC 6749 §4.1.2. */
  'authorization_code_replay',
  /** The owning client revoked a refresh token of the family (RFC 7009). */
  'revoked_by_client',
  /** The user signed out (RP-initiated logout) of the session the family belongs to. */
  'logout',
  /** The client was deleted. */
  'client_deleted',
  /** An operator or the user revoked the grant. */
  'revoked_by_user',
] as const;
export type TokenFamilyRevocationReason = (typeof TOKEN_FAMILY_REVOCATION_REASONS)[number];

export const CLIENT_ID_PATTERN = '^svc_[0-9a-f]{32}$';
/** The OP session id (`sid` claim): a public identifier of the browser session, never its cookie secret. */
export const SESSION_ID_PATTERN = '^[A-Za-z0-9_-]{16,64}$';

export type OAuthClientRegistered = {
  type: 'OAuthClientRegistered';
  data: {
    clientId: string;
    orgId: number;
    name: string;
    clientType: OAuthClientType;
    /** SHA-256 hex of the secret for confidential clients; null for public clients. */
    secretHash: string | null;
    redirectUris: string[];
    postLogoutRedirectUris: string[];
    allowedScopes: OAuthScope[];
  };
};

export type OAuthClientDeleted = { type: 'OAuthClientDeleted'; data: { clientId: string; orgId: number } };
/** A confidential client's secret was replaced (its SHA-256 only): the old one stops working. */
export type OAuthClientSecretRotated = { type: 'OAuthClientSecretRotated'; data: { clientId: string; orgId: number; secretHash: string } };

/** The grant a code carries and its token family inherits. */
export interface GrantFacts {
  clientId: string;
  orgId: number;
  userId: number;
  scopes: OAuthScope[];
  /** ISO 8601 UTC time the user authenticated (id_token `auth_time`). */
  authTime: string;
  /** How the user authenticated (id_token `amr`). */
  amr: AuthenticationMethod[];
  /** OP browser session (id_token `sid`), used by logout. */
  sid: string;
}

export type AuthorizationCodeIssued = {
  type: 'AuthorizationCodeIssued';
  data: GrantFacts & {
    codeHash: string;
    /** The family the code's redemption opens; named here so a replay can revoke it. */
    familyId: string;
    redirectUri: string;
    /** BASE64URL(SHA-256(code_verifier)); the method is always S256. */
    codeChallenge: string;
    nonce: string | null;
    /** ISO 8601 UTC: issue time + 60 s. */
    expiresAt: string;
  };
};

export type AuthorizationCodeRedeemed = {
  type: 'AuthorizationCodeRedeemed';
  data: { codeHash: string; familyId: string; clientId: string };
};

/** A redeemed code was presented again; `clientId` is the client that presented it. */
export type AuthorizationCodeReplayed = {
  type: 'AuthorizationCodeReplayed';
  data: { codeHash: string; familyId: string; clientId: string };
};

export type TokenFamilyStarted = {
  type: 'TokenFamilyStarted';
  data: GrantFacts & {
    familyId: string;
    codeHash: string;
    /** The first refresh token's hash; null when offline_access was not granted. */
    refreshTokenHash: string | null;
    /** ISO 8601 UTC: no refresh token of the family is accepted after this. */
    expiresAt: string;
  };
};

export type RefreshTokenRotated = {
  type: 'RefreshTokenRotated';
  data: { familyId: string; spentTokenHash: string; newTokenHash: string };
};

export type TokenFamilyRevoked = {
  type: 'TokenFamilyRevoked';
  data: { familyId: string; reason: TokenFamilyRevocationReason };
};

/** A browser signed in: the session's cookie secret appears only as its SHA-256. */
export type SignInSessionStarted = {
  type: 'SignInSessionStarted';
  data: { sessionHash: string; sid: string; userId: number; orgId: number; authTime: string; amr: AuthenticationMethod[] };
};
export type SignInSessionEnded = {
  type: 'SignInSessionEnded';
  data: { sessionHash: string; sid: string; reason: 'logout' | 'replaced' };
};

/** The user granted these scopes to the client (remembered; a later request for more asks again). */
export type OAuthConsentGranted = {
  type: 'OAuthConsentGranted';
  data: { userId: number; clientId: string; scopes: OAuthScope[] };
};

/** AES-256-GCM box (base64url fields) under a subject key, as in the core catalogue. */
export interface SealedValue {
  keyId: string;
  iv: string;
  ciphertext: string;
  tag: string;
}

/**
 * A confirmed TOTP second factor. The shared secret must be readable to verify codes, so it is
 * sealed under the user's subject key (destroyable), never stored in clear.
 */
export type TotpEnrolled = { type: 'TotpEnrolled'; data: { userId: number; secret: SealedValue } };
/** A new set of single-use recovery codes (their SHA-256 only); replaces any earlier set. */
export type RecoveryCodesIssued = { type: 'RecoveryCodesIssued'; data: { userId: number; codeHashes: string[] } };
export type RecoveryCodeUsed = { type: 'RecoveryCodeUsed'; data: { userId: number; codeHash: string } };
/**
 * A TOTP code of this RFC 6238 time step (Unix time / 30 s) was accepted: no code of this step or
 * an earlier one is accepted again (RFC 6238 §5.2), on any replica.
 */
export type TotpCodeAccepted = { type: 'TotpCodeAccepted'; data: { userId: number; timeStep: number } };
/** A WebAuthn credential: its id and COSE public key (public data), and the signature counter. */
export type PasskeyRegistered = {
  type: 'PasskeyRegistered';
  data: { userId: number; credentialId: string; publicKey: string; counter: number; transports: string[] };
};
export type PasskeyUsed = { type: 'PasskeyUsed'; data: { userId: number; credentialId: string; counter: number } };
/** The user removed a passkey from the account (a lost device): it signs in no more. */
export type PasskeyRemoved = { type: 'PasskeyRemoved'; data: { userId: number; credentialId: string } };
/** The user signs in with this upstream OpenID Provider account (issuer + subject). */
export type FederatedIdentityLinked = {
  type: 'FederatedIdentityLinked';
  data: { userId: number; orgId: number; issuer: string; subject: string };
};

/** A pending invitation to join an organization, addressed by email (and user id when known). */
export type InvitationCreated = {
  type: 'InvitationCreated';
  data: { inviteId: number; orgId: number; email: string; userId: number | null; role: string | null };
};

/** The invitee (a user of the organization, by then) accepted: the role offered is theirs. */
export type InvitationAccepted = { type: 'InvitationAccepted'; data: { inviteId: number; orgId: number; userId: number; role: string | null } };
/** The invitee declined. */
export type InvitationDeclined = { type: 'InvitationDeclined'; data: { inviteId: number; orgId: number; userId: number } };
/** An admin of the organization withdrew the invitation before it was answered. */
export type InvitationCancelled = { type: 'InvitationCancelled'; data: { inviteId: number; orgId: number } };

export type OAuthClientEvent = OAuthClientRegistered | OAuthClientSecretRotated | OAuthClientDeleted;
export type InvitationEvent = InvitationCreated | InvitationAccepted | InvitationDeclined | InvitationCancelled;
export type AuthorizationCodeEvent = AuthorizationCodeIssued | AuthorizationCodeRedeemed | AuthorizationCodeReplayed;
export type TokenFamilyEvent = TokenFamilyStarted | RefreshTokenRotated | TokenFamilyRevoked;
export type SignInSessionEvent = SignInSessionStarted | SignInSessionEnded;
export type UserCredentialEvent =
  | TotpEnrolled
  | RecoveryCodesIssued
  | RecoveryCodeUsed
  | TotpCodeAccepted
  | PasskeyRegistered
  | PasskeyUsed
  | PasskeyRemoved
  | FederatedIdentityLinked;
export type OAuthEvent =
  | OAuthClientEvent
  | AuthorizationCodeEvent
  | TokenFamilyEvent
  | SignInSessionEvent
  | OAuthConsentGranted
  | UserCredentialEvent
  | InvitationEvent;
export type OAuthEventType = OAuthEvent['type'];

export const oauthStreams = {
  clients: (orgId: number) => `oauth-clients-${orgId}`,
  authorizationCode: (codeHash: string) => `authorization-code-${codeHash}`,
  tokenFamily: (familyId: string) => `token-family-${familyId}`,
  signInSession: (sessionHash: string) => `signin-session-${sessionHash}`,
  consents: (userId: number) => `oauth-consents-${userId}`,
  userCredentials: (userId: number) => `user-credentials-${userId}`,
  invitation: (inviteId: number) => `invitation-${inviteId}`,
} as const;

// ---- JSON Schemas --------------------------------------------------------------------------

const hash = { type: 'string', pattern: SHA256_HEX_PATTERN } as const;
const familyId = { type: 'string', pattern: FAMILY_ID_PATTERN } as const;
const clientId = { type: 'string', pattern: CLIENT_ID_PATTERN } as const;
const orgId = { type: 'integer', minimum: 1 } as const;
const userId = { type: 'integer', minimum: 1 } as const;
const instant = { type: 'string', format: 'date-time' } as const;
// Registration validates the form (redirect-uri.ts); the schema bounds size and forbids fragments.
const uri = { type: 'string', minLength: 1, maxLength: 2000, pattern: '^[^#\\s]+$' } as const;
const scopes = { type: 'array', items: { enum: [...OAUTH_SCOPES] }, uniqueItems: true } as const;
const amr = { type: 'array', items: { enum: [...AMR_VALUES] }, minItems: 1, uniqueItems: true } as const;
const base64url = (maxLength: number) => ({ type: 'string', minLength: 1, maxLength, pattern: '^[A-Za-z0-9_-]+$' }) as const;
const counter = { type: 'integer', minimum: 0, maximum: 4294967295 } as const;
const sealed = {
  type: 'object',
  additionalProperties: false,
  required: ['keyId', 'iv', 'ciphertext', 'tag'],
  properties: { keyId: base64url(64), iv: base64url(16), ciphertext: base64url(4096), tag: base64url(22) },
} as const;

const grantProperties = {
  clientId,
  orgId,
  userId,
  scopes: { ...scopes, minItems: 1 },
  authTime: instant,
  amr,
  sid: { type: 'string', pattern: SESSION_ID_PATTERN },
} as const;
const grantRequired = ['clientId', 'orgId', 'userId', 'scopes', 'authTime', 'amr', 'sid'] as const;

function object(properties: Record<string, unknown>, required: readonly string[] = Object.keys(properties)) {
  return { type: 'object', additionalProperties: false, required: [...required], properties } as const;
}

export interface EventSchema {
  /** Version of the data shape; bumped (with an upcaster) when the shape changes. */
  readonly version: number;
  readonly schema: Readonly<Record<string, unknown>>;
}

export const OAUTH_EVENT_SCHEMAS: Readonly<Record<OAuthEventType, EventSchema>> = {
  OAuthClientRegistered: {
    version: 1,
    schema: object({
      clientId,
      orgId,
      name: { type: 'string', minLength: 1, maxLength: 100 },
      clientType: { enum: ['public', 'confidential'] },
      secretHash: { anyOf: [hash, { type: 'null' }] },
      redirectUris: { type: 'array', items: uri, minItems: 1, maxItems: 20, uniqueItems: true },
      postLogoutRedirectUris: { type: 'array', items: uri, maxItems: 20, uniqueItems: true },
      allowedScopes: { ...scopes, minItems: 1 },
    }),
  },
  OAuthClientDeleted: { version: 1, schema: object({ clientId, orgId }) },
  OAuthClientSecretRotated: { version: 1, schema: object({ clientId, orgId, secretHash: hash }) },
  AuthorizationCodeIssued: {
    version: 1,
    schema: object(
      {
        ...grantProperties,
        codeHash: hash,
        familyId,
        redirectUri: uri,
        codeChallenge: { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$' },
        nonce: { anyOf: [{ type: 'string', minLength: 1, maxLength: 512 }, { type: 'null' }] },
        expiresAt: instant,
      },
      [...grantRequired, 'codeHash', 'familyId', 'redirectUri', 'codeChallenge', 'nonce', 'expiresAt'],
    ),
  },
  AuthorizationCodeRedeemed: { version: 1, schema: object({ codeHash: hash, familyId, clientId }) },
  AuthorizationCodeReplayed: { version: 1, schema: object({ codeHash: hash, familyId, clientId }) },
  TokenFamilyStarted: {
    version: 1,
    schema: object(
      {
        ...grantProperties,
        familyId,
        codeHash: hash,
        refreshTokenHash: { anyOf: [hash, { type: 'null' }] },
        expiresAt: instant,
      },
      [...grantRequired, 'familyId', 'codeHash', 'refreshTokenHash', 'expiresAt'],
    ),
  },
  RefreshTokenRotated: { version: 1, schema: object({ familyId, spentTokenHash: hash, newTokenHash: hash }) },
  TokenFamilyRevoked: { version: 1, schema: object({ familyId, reason: { enum: [...TOKEN_FAMILY_REVOCATION_REASONS] } }) },
  SignInSessionStarted: {
    version: 1,
    schema: object({ sessionHash: hash, sid: grantProperties.sid, userId, orgId, authTime: instant, amr }),
  },
  SignInSessionEnded: {
    version: 1,
    schema: object({ sessionHash: hash, sid: grantProperties.sid, reason: { enum: ['logout', 'replaced'] } }),
  },
  OAuthConsentGranted: { version: 1, schema: object({ userId, clientId, scopes: { ...scopes, minItems: 1 } }) },
  TotpEnrolled: { version: 1, schema: object({ userId, secret: sealed }) },
  RecoveryCodesIssued: {
    version: 1,
    schema: object({ userId, codeHashes: { type: 'array', items: hash, minItems: 1, maxItems: 20, uniqueItems: true } }),
  },
  RecoveryCodeUsed: { version: 1, schema: object({ userId, codeHash: hash }) },
  TotpCodeAccepted: { version: 1, schema: object({ userId, timeStep: { type: 'integer', minimum: 0, maximum: 1e12 } }) },
  PasskeyRegistered: {
    version: 1,
    schema: object({
      userId,
      credentialId: base64url(1024),
      publicKey: base64url(4096),
      counter,
      transports: { type: 'array', items: { type: 'string', pattern: '^[a-z-]{1,32}$' }, maxItems: 8, uniqueItems: true },
    }),
  },
  PasskeyUsed: { version: 1, schema: object({ userId, credentialId: base64url(1024), counter }) },
  PasskeyRemoved: { version: 1, schema: object({ userId, credentialId: base64url(1024) }) },
  FederatedIdentityLinked: {
    version: 1,
    schema: object({
      userId,
      orgId,
      issuer: { type: 'string', minLength: 1, maxLength: 2000, pattern: '^https?://' },
      subject: { type: 'string', minLength: 1, maxLength: 255 },
    }),
  },
  InvitationCreated: {
    version: 1,
    schema: object({
      inviteId: userId,
      orgId,
      email: { type: 'string', minLength: 3, maxLength: 254, pattern: '^[^\\s@]+@[^\\s@]+$' },
      userId: { anyOf: [userId, { type: 'null' }] },
      role: { anyOf: [{ enum: ['admin', 'self_invite', 'employee_view'] }, { type: 'null' }] },
    }),
  },
  InvitationAccepted: {
    version: 1,
    schema: object({ inviteId: userId, orgId, userId, role: { anyOf: [{ enum: ['admin', 'self_invite', 'employee_view'] }, { type: 'null' }] } }),
  },
  InvitationDeclined: { version: 1, schema: object({ inviteId: userId, orgId, userId }) },
  InvitationCancelled: { version: 1, schema: object({ inviteId: userId, orgId }) },
};
