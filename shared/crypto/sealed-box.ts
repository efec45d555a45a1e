// Sealing personal data under a subject key (crypto-shredding, see subject-keys.ts).
// AES-256-GCM with a fresh 96-bit IV per seal; the key id is bound as additional authenticated
// data, so a sealed box cannot be relabelled to claim another key. Fields are base64url.
import { createCipheriv, createDecipheriv } from 'node:crypto';
import type { Sealed, SubjectKey } from './subject-keys.js';
import { pooledRandomBytes } from './random-pool.js';

const ALGORITHM = 'aes-256-gcm';
const KEY_LENGTH = 32;
const IV_LENGTH = 12;
const TAG_LENGTH = 16;

/** The sealed box was altered, or is opened with the wrong key: never a partial or garbled value. */
export class SealedBoxError extends Error {
  override readonly name = 'SealedBoxError';
}

function assertKey(key: Buffer): void {
  if (key.length !== KEY_LENGTH) throw new SealedBoxError(`subject key must be ${KEY_LENGTH} bytes`);
}

export function seal(key: SubjectKey, value: unknown): Sealed {
  assertKey(key.key);
  const json = JSON.stringify(value);
  if (json === undefined) throw new TypeError('cannot seal a value that has no JSON form');
  const iv = pooledRandomBytes(IV_LENGTH);
  const cipher = createCipheriv(ALGORITHM, key.key, iv, { authTagLength: TAG_LENGTH });
  cipher.setAAD(Buffer.from(key.keyId, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(json, 'utf8'), cipher.final()]);
  return {
    keyId: key.keyId,
    iv: iv.toString('base64url'),
    ciphertext: ciphertext.toString('base64url'),
    tag: cipher.getAuthTag().toString('base64url'),
  };
}

/** Throws SealedBoxError when the box was tampered with or `key` is not the key it was sealed under. */
export function open<T>(key: Buffer, sealed: Sealed): T {
  assertKey(key);
  const iv = Buffer.from(sealed.iv, 'base64url');
  const tag = Buffer.from(sealed.tag, 'base64url');
  // GCM accepts short tags unless told otherwise; a truncated tag would weaken authentication.
  if (iv.length !== IV_LENGTH || tag.length !== TAG_LENGTH) throw new SealedBoxError('sealed box is malformed');
  let plaintext: string;
  try {
    const decipher = createDecipheriv(ALGORITHM, key, iv, { authTagLength: TAG_LENGTH });
    decipher.setAAD(Buffer.from(sealed.keyId, 'utf8'));
    decipher.setAuthTag(tag);
    plaintext = Buffer.concat([decipher.update(Buffer.from(sealed.ciphertext, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    throw new SealedBoxError('sealed box failed authentication: altered, or not sealed under this key');
  }
  return JSON.parse(plaintext) as T;
}
