// Signed tokens: the access token (RFC 9068 JWT profile, header typ at+jwt, 900 s) and the
// OpenID Connect id_token, both RS256 with the current signing key; and their offline
// verification against a JWKS.
//
// The header `typ` keeps the two apart (RFC 8725 §3.11): an id_token (typ JWT) is never accepted
// as an access token, and an access token is never accepted as an id_token_hint.
import { createHash, randomUUID } from 'node:crypto';
import {
  SignJWT,
  compactVerify,
  createLocalJWKSet,
  decodeProtectedHeader,
  jwtVerify,
  errors as joseErrors,
  type JWTPayload,
  type JWTVerifyGetKey,
} from 'jose';
import { InvalidTokenError } from '../errors.js';
import type { AuthenticationMethod } from './oauth-events.js';
import { formatScope } from './scopes.js';
import { SIGNING_ALGORITHM, type ActiveSigningKey, type JsonWebKeySet } from './signing-keys.js';

export const ACCESS_TOKEN_TTL_SECONDS = 900;
export const ID_TOKEN_TTL_SECONDS = 3600;
/** What a signing key must stay published for after it stops signing. */
export const MAX_SIGNED_TOKEN_LIFETIME_SECONDS = Math.max(ACCESS_TOKEN_TTL_SECONDS, ID_TOKEN_TTL_SECONDS);

export const ACCESS_TOKEN_TYPE = 'at+jwt';
export const ID_TOKEN_TYPE = 'JWT';

const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

/** The subject of every token: the user id in decimal (one subject space: `subject_types_supported` public). */
export function subjectOf(userId: number): string {
  return String(userId);
}

/**
 * The audience of every access token: the service's API (resource endpoints under /api/v1 and
 * userinfo). Command and query services both derive it from the issuer, so they always agree.
 */
export function accessTokenAudience(issuer: string): string {
  return `${issuer}/api`;
}

export interface AccessTokenInput {
  readonly issuer: string;
  /** The resource server identifier the token is for (RFC 9068 `aud`). */
  readonly audience: string;
  /** The user (RFC 9068 `sub`). */
  readonly subject: string;
  readonly clientId: string;
  readonly scopes: readonly string[];
  /** The token family, so a revoked family's access tokens can be refused before they expire. */
  readonly familyId: string;
  readonly now: Date;
  /** Defaults to a random UUID. */
  readonly jti?: string;
  /** Never past the family's own end (a token must not outlive its grant). */
  readonly notAfter?: Date;
}

/** RFC 9068 §2.2 claims plus `family_id` (claims beyond typ and alg are not part of the contract). */
export interface AccessTokenClaims {
  readonly iss: string;
  readonly sub: string;
  readonly aud: string;
  readonly client_id: string;
  readonly scope: string;
  readonly exp: number;
  readonly iat: number;
  readonly jti: string;
  readonly family_id: string;
}

export interface MintedAccessToken {
  readonly token: string;
  /** The token response's `expires_in`. */
  readonly expiresIn: number;
  readonly claims: AccessTokenClaims;
}

export async function mintAccessToken(key: ActiveSigningKey, input: AccessTokenInput): Promise<MintedAccessToken> {
  const iat = seconds(input.now);
  let exp = iat + ACCESS_TOKEN_TTL_SECONDS;
  if (input.notAfter) exp = Math.min(exp, seconds(input.notAfter));
  if (exp <= iat) throw new RangeError('the grant has ended: no access token can be minted from it');
  const claims: AccessTokenClaims = {
    iss: input.issuer,
    sub: input.subject,
    aud: input.audience,
    client_id: input.clientId,
    scope: formatScope(input.scopes),
    exp,
    iat,
    jti: input.jti ?? randomUUID(),
    family_id: input.familyId,
  };
  const token = await new SignJWT({ ...claims })
    .setProtectedHeader({ alg: SIGNING_ALGORITHM, typ: ACCESS_TOKEN_TYPE, kid: key.kid })
    .sign(key.privateKey);
  return { token, expiresIn: exp - iat, claims };
}

export interface IdTokenInput {
  readonly issuer: string;
  readonly subject: string;
  /** The client the id_token is for: `aud` (and `azp` when `aud` has more than one entry). */
  readonly clientId: string;
  readonly additionalAudiences?: readonly string[];
  readonly nonce: string | null;
  /** ISO 8601 time of the authentication (OIDC: unchanged on refresh). */
  readonly authTime: string;
  readonly amr: readonly AuthenticationMethod[];
  readonly sid: string;
  /** When given, `at_hash` binds the id_token to the access token issued with it (OIDC Core §3.1.3.6). */
  readonly accessToken?: string;
  readonly now: Date;
}

/** `at_hash`: base64url of the left half of SHA-256 of the access token's ASCII (RS256 uses SHA-256). */
export function accessTokenHash(accessToken: string): string {
  return createHash('sha256').update(accessToken, 'ascii').digest().subarray(0, 16).toString('base64url');
}

export async function mintIdToken(key: ActiveSigningKey, input: IdTokenInput): Promise<string> {
  const iat = seconds(input.now);
  const audiences = [input.clientId, ...(input.additionalAudiences ?? []).filter((a) => a !== input.clientId)];
  const payload: JWTPayload = {
    iss: input.issuer,
    sub: input.subject,
    aud: audiences.length === 1 ? input.clientId : audiences,
    exp: iat + ID_TOKEN_TTL_SECONDS,
    iat,
    auth_time: seconds(new Date(input.authTime)),
    amr: [...input.amr],
    sid: input.sid,
  };
  // OIDC Core §2: azp is needed only when the id_token has several audiences.
  if (audiences.length > 1) payload.azp = input.clientId;
  if (input.nonce !== null) payload.nonce = input.nonce;
  if (input.accessToken !== undefined) payload.at_hash = accessTokenHash(input.accessToken);
  return new SignJWT(payload).setProtectedHeader({ alg: SIGNING_ALGORITHM, typ: ID_TOKEN_TYPE, kid: key.kid }).sign(key.privateKey);
}

/** A verification key resolver over a fixed key set (jose createLocalJWKSet). */
export function localKeySet(jwks: JsonWebKeySet): JWTVerifyGetKey {
  return createLocalJWKSet({ keys: jwks.keys.map((k) => ({ ...k })) });
}

/**
 * A resolver that reloads the key set when a token names a kid it does not know (a key rotated in
 * by another process), at most once per `minReloadMs`, and at least every `maxAgeMs`.
 */
export function refreshingKeySet(
  load: () => Promise<JsonWebKeySet>,
  options: { minReloadMs?: number; maxAgeMs?: number; clock?: () => number } = {},
): JWTVerifyGetKey {
  const minReloadMs = options.minReloadMs ?? 5_000;
  const maxAgeMs = options.maxAgeMs ?? 60_000;
  const clock = options.clock ?? Date.now;
  let state: { kids: Set<string>; resolve: JWTVerifyGetKey; loadedAt: number } | null = null;
  let pending: Promise<void> | null = null;
  const reload = () =>
    (pending ??= load()
      .then((jwks) => {
        state = { kids: new Set(jwks.keys.map((k) => k.kid)), resolve: localKeySet(jwks), loadedAt: clock() };
      })
      .finally(() => {
        pending = null;
      }));
  return async (header, token) => {
    const now = clock();
    const stale = !state || now - state.loadedAt >= maxAgeMs;
    const unknownKid = state !== null && header.kid !== undefined && !state.kids.has(header.kid) && now - state.loadedAt >= minReloadMs;
    if (stale || unknownKid) await reload();
    return state!.resolve(header, token);
  };
}

export interface VerifyOptions {
  readonly issuer: string;
  readonly audience: string;
  readonly now?: Date;
  /** Allowed clock difference between services, in seconds. */
  readonly clockToleranceSeconds?: number;
}

/**
 * Offline verification of an access token: RS256 only, header typ at+jwt (RFC 9068 §4), issuer,
 * audience, expiry, and the claims this service relies on. Any failure is InvalidTokenError (401);
 * the reason is deliberately not told to the caller.
 */
export async function verifyAccessToken(token: string, keys: JWTVerifyGetKey, options: VerifyOptions): Promise<AccessTokenClaims> {
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, keys, {
      algorithms: [SIGNING_ALGORITHM],
      typ: ACCESS_TOKEN_TYPE,
      issuer: options.issuer,
      audience: options.audience,
      currentDate: options.now,
      clockTolerance: options.clockToleranceSeconds ?? 0,
      requiredClaims: ['exp', 'iat', 'sub', 'jti', 'client_id', 'scope', 'family_id'],
    }));
  } catch {
    throw new InvalidTokenError();
  }
  const strings = ['sub', 'jti', 'client_id', 'scope', 'family_id'] as const;
  if (!strings.every((name) => typeof payload[name] === 'string') || typeof payload.aud !== 'string') {
    throw new InvalidTokenError();
  }
  return payload as unknown as AccessTokenClaims;
}

/** An id_token of ours is about 1 KB; anything far larger is not one. */
const MAX_ID_TOKEN_HINT_LENGTH = 8192;
/** A JWS in compact serialisation: three base64url parts (checked before any signature work). */
export const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** Whether a parameter can be an id_token_hint at all (checked before any signature work). */
export function isIdTokenHintShaped(value: string): boolean {
  return value.length <= MAX_ID_TOKEN_HINT_LENGTH && COMPACT_JWS.test(value);
}

export interface IdTokenHint {
  readonly sub: string;
  readonly aud: readonly string[];
  readonly sid: string | null;
}

/** An id_token_hint signed with a key the key set no longer holds (rotated out): it may be genuine, but cannot be checked. */
export class UnknownHintKeyError extends InvalidTokenError {}

/**
 * An id_token_hint (authorize, OIDC Core §3.1.2.1; logout, RP-Initiated Logout §2): the signature
 * must verify with one of our keys and it must be one of our id_tokens, but it may have expired.
 * Throws InvalidTokenError otherwise (UnknownHintKeyError for a key not in the set); a key set
 * that cannot be loaded is thrown as it is, the server's failure and not the token's.
 */
export async function verifyIdTokenHint(token: string, keys: JWTVerifyGetKey, options: { readonly issuer: string }): Promise<IdTokenHint> {
  let typ: unknown;
  try {
    typ = decodeProtectedHeader(token).typ;
  } catch {
    throw new InvalidTokenError();
  }
  if (typ !== ID_TOKEN_TYPE) throw new InvalidTokenError();
  let payload: JWTPayload;
  try {
    // Signature only (no expiry check): compactVerify, then the claims by hand.
    const { payload: bytes } = await compactVerify(token, keys, { algorithms: [SIGNING_ALGORITHM] });
    payload = JSON.parse(new TextDecoder().decode(bytes)) as JWTPayload;
  } catch (error) {
    if (error instanceof joseErrors.JWKSNoMatchingKey) throw new UnknownHintKeyError();
    if (error instanceof joseErrors.JOSEError || error instanceof SyntaxError) throw new InvalidTokenError();
    throw error;
  }
  const aud = typeof payload.aud === 'string' ? [payload.aud] : payload.aud;
  if (
    payload.iss !== options.issuer ||
    typeof payload.sub !== 'string' ||
    !Array.isArray(aud) ||
    aud.length === 0 ||
    !aud.every((a) => typeof a === 'string') ||
    (payload.sid !== undefined && typeof payload.sid !== 'string')
  ) {
    throw new InvalidTokenError();
  }
  return { sub: payload.sub, aud, sid: typeof payload.sid === 'string' ? payload.sid : null };
}
