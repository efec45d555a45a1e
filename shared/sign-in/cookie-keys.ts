// Keys for what the sign-in pages keep in the browser, derived from the key-encryption key with
// HKDF (RFC 5869), one label per use: a key never serves two purposes, and the KEK itself never
// touches a cookie.
import { hkdfSync } from 'node:crypto';

export interface SignInKeys {
  /** AES-256-GCM key of the sealed cookies (flow, half-signed-in state, pending TOTP secret). */
  readonly cookieKey: Buffer;
  /** HMAC-SHA-256 key binding a CSRF token to the browser's CSRF cookie. */
  readonly csrfKey: Buffer;
}

function derive(kek: Buffer, label: string): Buffer {
  return Buffer.from(hkdfSync('sha256', kek, Buffer.alloc(0), `guestpass sign-in ${label} v1`, 32));
}

export function signInKeys(kek: Buffer): SignInKeys {
  if (kek.length < 32) throw new RangeError('the key-encryption key must be at least 32 bytes');
  return { cookieKey: derive(kek, 'sealed cookies'), csrfKey: derive(kek, 'csrf') };
}
