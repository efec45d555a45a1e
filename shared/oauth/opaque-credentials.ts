// Opaque bearer credentials the authorization server hands out: authorization codes, refresh
// tokens and client secrets. Each carries 256 random bits and is stored and put in events only
// as its SHA-256 hash.
//
// Why SHA-256 and not a slow KDF (scrypt, argon2): slow hashes exist to protect low-entropy
// secrets (passwords) against offline guessing. A uniformly random 256-bit value cannot be
// guessed from its hash however fast the hash is, so a fast hash loses nothing, and it lets the
// token endpoint look a credential up by its hash and compare in constant time at thousands of
// requests per second.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

const SECRET_BYTES = 32;
const BASE64URL_256_BITS = '[A-Za-z0-9_-]{43}';

export const SHA256_HEX_PATTERN = '^[0-9a-f]{64}$';
/** A token family id: 128 random bits, hex. Not a secret (it is in access tokens); only a name. */
export const FAMILY_ID_PATTERN = '^[0-9a-f]{32}$';

const FAMILY_ID = new RegExp(FAMILY_ID_PATTERN);
const REFRESH_TOKEN = new RegExp(`^([0-9a-f]{32})\\.(${BASE64URL_256_BITS})$`);
const AUTHORIZATION_CODE = new RegExp(`^${BASE64URL_256_BITS}$`);

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/** Constant-time equality of two hex digests (false, not an exception, on length mismatch). */
export function digestsEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}

export function newFamilyId(): string {
  return randomBytes(16).toString('hex');
}

export function isFamilyId(value: string): boolean {
  return FAMILY_ID.test(value);
}

export interface IssuedCredential {
  /** Given to the client once; never stored. */
  readonly value: string;
  /** SHA-256 hex of `value`: what events and tables hold. */
  readonly hash: string;
}

/** An authorization code: its hash names the code's stream (`authorization-code-{hash}`). */
export function newAuthorizationCode(): IssuedCredential {
  const value = randomBytes(SECRET_BYTES).toString('base64url');
  return { value, hash: sha256Hex(value) };
}

/** The stream-naming hash of a presented code, or null when it cannot be one of ours. */
export function authorizationCodeHash(presented: string): string | null {
  return AUTHORIZATION_CODE.test(presented) ? sha256Hex(presented) : null;
}

/**
 * A refresh token is `{familyId}.{secret}`: the family id lets the token endpoint load the
 * family's stream directly (a read-model lookup by hash would lag behind the rotation that just
 * happened). Knowing a family id alone is worth nothing: only the hash of the whole token is
 * matched, and an unknown token never revokes a family.
 */
export function newRefreshToken(familyId: string): IssuedCredential {
  if (!FAMILY_ID.test(familyId)) throw new TypeError('malformed token family id');
  const value = `${familyId}.${randomBytes(SECRET_BYTES).toString('base64url')}`;
  return { value, hash: sha256Hex(value) };
}

/** The family and hash of a presented refresh token, or null when it is not well formed. */
export function parseRefreshToken(presented: string): { familyId: string; hash: string } | null {
  const m = REFRESH_TOKEN.exec(presented);
  return m ? { familyId: m[1]!, hash: sha256Hex(presented) } : null;
}

/** A confidential client's secret: shown once by `client create`, stored as its hash. */
export function newClientSecret(): IssuedCredential {
  const value = randomBytes(SECRET_BYTES).toString('base64url');
  return { value, hash: sha256Hex(value) };
}
