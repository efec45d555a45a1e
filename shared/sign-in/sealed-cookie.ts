// State kept in the browser between requests (the authorization in progress, the half-signed-in
// state before the second factor, a TOTP secret awaiting confirmation) is sealed, not just
// signed: AES-256-GCM authenticates it (the browser cannot forge or edit it) and hides it (a TOTP
// secret must not be readable from the cookie jar). The purpose is bound as additional
// authenticated data, so a cookie sealed for one purpose never opens as another; the expiry is
// inside the box, so an old copy replayed after its Max-Age is refused too.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const IV_BYTES = 12;
const TAG_BYTES = 16;
const FORMAT = /^v1\.([A-Za-z0-9_-]{16})\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{22})$/;

interface Box<T> {
  readonly exp: number;
  readonly v: T;
}

/** The cookie value: `v1.{iv}.{ciphertext}.{tag}`, base64url parts (cookie-safe without encoding). */
export function sealCookieValue(key: Buffer, purpose: string, value: unknown, expiresAt: Date): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(purpose, 'utf8'));
  const box: Box<unknown> = { exp: expiresAt.getTime(), v: value };
  const ciphertext = Buffer.concat([cipher.update(JSON.stringify(box), 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), ciphertext.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
}

/** The sealed value, or null when absent, altered, sealed for another purpose or expired. */
export function openCookieValue<T>(key: Buffer, purpose: string, cookie: string | undefined | null, now: Date): T | null {
  if (!cookie) return null;
  const m = FORMAT.exec(cookie);
  if (!m) return null;
  let box: Box<T>;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(m[1]!, 'base64url'), { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(purpose, 'utf8'));
    decipher.setAuthTag(Buffer.from(m[3]!, 'base64url'));
    const plaintext = Buffer.concat([decipher.update(Buffer.from(m[2]!, 'base64url')), decipher.final()]).toString('utf8');
    box = JSON.parse(plaintext) as Box<T>;
  } catch {
    return null;
  }
  if (typeof box.exp !== 'number' || !(now.getTime() < box.exp)) return null;
  return box.v;
}
