// Recovery codes: shown once at TOTP enrolment, each signs in once instead of a TOTP code.
//
// 16 characters of Crockford's Base32 alphabet (no I, L, O, U: nothing to misread), 80 random
// bits each, shown as four groups of four. The events keep only SHA-256 of the normalised code;
// 80 bits is what makes a fast hash enough (an offline search of 2^80 SHA-256 is out of reach,
// where a short 8-digit code's hash would fall in seconds).
import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../oauth/opaque-credentials.js';

export const RECOVERY_CODE_COUNT = 10;
const LENGTH = 16;
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const NORMALISED = /^[0-9a-hjkmnp-tv-z]{16}$/;

/** A set of new codes, in display form (`xxxx-xxxx-xxxx-xxxx`). */
export function newRecoveryCodes(count = RECOVERY_CODE_COUNT): string[] {
  const codes = new Set<string>();
  while (codes.size < count) {
    // 256 is a multiple of 32: `byte & 31` is uniform.
    const chars = [...randomBytes(LENGTH)].map((b) => ALPHABET[b & 31]).join('');
    codes.add(chars.replace(/(.{4})(?=.)/g, '$1-'));
  }
  return [...codes];
}

/**
 * The canonical form of what the user typed, or null when it cannot be a recovery code: case,
 * spaces and dashes do not matter, and the letters Crockford's alphabet leaves out are read as
 * the digits they look like (O as 0, I and L as 1).
 */
export function normaliseRecoveryCode(input: string): string | null {
  const code = input
    .toLowerCase()
    .replace(/[\s-]+/g, '')
    .replace(/o/g, '0')
    .replace(/[il]/g, '1');
  return NORMALISED.test(code) ? code : null;
}

/** What the events store: SHA-256 hex of the normalised code. */
export function recoveryCodeHash(code: string): string | null {
  const normalised = normaliseRecoveryCode(code);
  return normalised === null ? null : sha256Hex(normalised);
}
