// PKCE (RFC 7636), S256 only: `plain` gives no protection against a leaked authorization request
// and the spec makes S256 mandatory for every client.
import { createHash, timingSafeEqual } from 'node:crypto';

export const CODE_CHALLENGE_METHOD = 'S256';

// RFC 7636 §4.1: code-verifier = 43*128unreserved; unreserved = ALPHA / DIGIT / "-" / "." / "_" / "~".
const CODE_VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;
// BASE64URL(SHA-256(...)) is always 43 characters without padding.
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/** A verifier of the RFC's length and alphabet; anything else is `invalid_request` at the token endpoint. */
export function isValidCodeVerifier(value: string): boolean {
  return CODE_VERIFIER.test(value);
}

/**
 * An S256 challenge: 43 base64url characters that decode to exactly 32 bytes in canonical form
 * (the last character carries 2 unused bits that must be zero, so only 16 of 64 letters fit there).
 */
export function isValidS256Challenge(value: string): boolean {
  if (!S256_CHALLENGE.test(value)) return false;
  const bytes = Buffer.from(value, 'base64url');
  return bytes.length === 32 && bytes.toString('base64url') === value;
}

export function s256Challenge(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/** RFC 7636 §4.6, compared in constant time. False for a malformed verifier or challenge. */
export function verifyCodeVerifier(verifier: string, challenge: string): boolean {
  if (!isValidCodeVerifier(verifier) || !isValidS256Challenge(challenge)) return false;
  const expected = Buffer.from(challenge, 'base64url');
  const actual = createHash('sha256').update(verifier, 'ascii').digest();
  return timingSafeEqual(actual, expected);
}
