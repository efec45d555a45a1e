// The key-encryption key (KEK) that seals the signing keys' private halves at rest (AES-256-GCM).
// Production passes it in the environment; the embedded default generates one into the data
// folder on first start (mode 0600) and reuses it afterwards.
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

export const KEK_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class KeyEncryptionKeyError extends Error {
  override readonly name = 'KeyEncryptionKeyError';
}

/** 32 bytes given as 64 hex digits, or base64 / base64url (padding optional). */
export function parseKeyEncryptionKey(text: string): Buffer {
  const value = text.trim();
  let key: Buffer | null = null;
  if (/^[0-9a-fA-F]{64}$/.test(value)) key = Buffer.from(value, 'hex');
  else if (/^[A-Za-z0-9+/_-]{43}={0,1}$/.test(value)) key = Buffer.from(value.replace(/=+$/, ''), 'base64url');
  if (!key || key.length !== KEK_BYTES) {
    throw new KeyEncryptionKeyError(`the key-encryption key must be ${KEK_BYTES} bytes, as 64 hex digits or base64`);
  }
  return key;
}

/** Reads the KEK file, creating it (exclusive create, 0600) when absent: two first starts agree on one key. */
export async function loadOrCreateKeyEncryptionKey(file: string): Promise<Buffer> {
  try {
    return parseKeyEncryptionKey(await readFile(file, 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  try {
    await writeFile(file, `${randomBytes(KEK_BYTES).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return parseKeyEncryptionKey(await readFile(file, 'utf8'));
}

/**
 * A short public name of a KEK, stored beside what it sealed, so "sealed under another KEK" is a
 * clear message instead of a bare authentication failure. An HMAC reveals nothing about the key.
 */
export function keyEncryptionKeyId(kek: Uint8Array): string {
  return createHmac('sha256', kek).update('guestpass key-encryption key id').digest('hex').slice(0, 16);
}

export interface Sealed {
  readonly kekId: string;
  readonly iv: Buffer;
  readonly ciphertext: Buffer;
  readonly tag: Buffer;
}

/**
 * AES-256-GCM with a random 96-bit IV. `context` is bound as additional authenticated data (the
 * signing key's kid), so a sealed value moved to another row no longer opens.
 */
export function seal(plaintext: Uint8Array, kek: Uint8Array, context: string): Sealed {
  if (kek.length !== KEK_BYTES) throw new KeyEncryptionKeyError(`the key-encryption key must be ${KEK_BYTES} bytes`);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', kek, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { kekId: keyEncryptionKeyId(kek), iv, ciphertext, tag: cipher.getAuthTag() };
}

/** Throws KeyEncryptionKeyError for another KEK, a tampered value or a wrong context. */
export function open(sealed: Sealed, kek: Uint8Array, context: string): Buffer {
  if (kek.length !== KEK_BYTES) throw new KeyEncryptionKeyError(`the key-encryption key must be ${KEK_BYTES} bytes`);
  if (sealed.kekId !== keyEncryptionKeyId(kek)) {
    throw new KeyEncryptionKeyError(`"${context}" was sealed under another key-encryption key (id ${sealed.kekId})`);
  }
  if (sealed.iv.length !== IV_BYTES || sealed.tag.length !== TAG_BYTES) {
    throw new KeyEncryptionKeyError(`"${context}" is not a sealed value`);
  }
  try {
    const decipher = createDecipheriv('aes-256-gcm', kek, sealed.iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(sealed.tag);
    return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]);
  } catch {
    throw new KeyEncryptionKeyError(`"${context}" failed authentication: tampered or sealed for another key`);
  }
}
