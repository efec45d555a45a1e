// The key-encryption keys (KEKs) that wrap the per-subject data keys and the contact search key
// at rest: one current KEK that wraps, and previous ones that still unwrap during a rotation
// (DATA_KEY_ENCRYPTION_KEY and DATA_KEY_ENCRYPTION_KEY_PREVIOUS). A database dump alone then opens
// no personal data.
//
// Wrapping is AES-256-GCM with a random 96-bit IV and the KEK's id bound as additional
// authenticated data, rather than AES key wrap with padding (RFC 5649, `id-aes256-wrap-pad`):
// GCM is what every other sealed value of the service uses (sealed-box.ts, the OAuth KEK), its
// 128-bit tag authenticates more strongly than key wrap's 64-bit integrity check, and it binds the
// kek id, which key wrap cannot. GCM's limit under one key (2^32 random IVs) is far above the
// number of wraps a KEK ever does (one per data key, plus one per rewrap).
import { createCipheriv, createDecipheriv, createHmac } from 'node:crypto';
import { pooledRandomBytes } from './random-pool.js';

const KEK_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A key that cannot be unwrapped: unknown KEK, tampered, or wrapped for another KEK. Never carries key bytes. */
export class DataKeyRingError extends Error {
  override readonly name = 'DataKeyRingError';
}

export interface WrappedKey {
  /** Which KEK wrapped it (dataKekId of the KEK). */
  readonly kekId: string;
  /** IV (12 bytes) || ciphertext || tag (16 bytes). */
  readonly wrapped: Buffer;
}

/**
 * The public name of a data KEK, stored beside each key it wrapped: an HMAC under the KEK itself,
 * which reveals nothing about it. Its own label keeps it apart from the OAuth KEK's id even when an
 * operator gives both variables the same key.
 */
export function dataKekId(kek: Uint8Array): string {
  return createHmac('sha256', kek).update('guestpass data key-encryption key id').digest('hex').slice(0, 16);
}

function aad(kekId: string): Buffer {
  return Buffer.from(`guestpass data key v1 ${kekId}`, 'utf8');
}

export class DataKeyRing {
  /** The id of the KEK new keys are wrapped under. */
  readonly currentKekId: string;
  private readonly current: Buffer;
  private readonly keks = new Map<string, Buffer>();

  /** `current` wraps and unwraps; `previous` only unwrap (keys still under them until a rewrap). */
  constructor(current: Uint8Array, previous: readonly Uint8Array[] = []) {
    for (const kek of [current, ...previous]) {
      if (kek.length !== KEK_BYTES) throw new DataKeyRingError(`a data key-encryption key must be ${KEK_BYTES} bytes`);
      const id = dataKekId(kek);
      if (!this.keks.has(id)) this.keks.set(id, Buffer.from(kek));
    }
    this.currentKekId = dataKekId(current);
    this.current = this.keks.get(this.currentKekId)!;
  }

  /** The ids of every KEK this ring can unwrap with, the current one first. */
  get kekIds(): string[] {
    return [...this.keks.keys()];
  }

  has(kekId: string): boolean {
    return this.keks.has(kekId);
  }

  wrap(dataKey: Uint8Array): WrappedKey {
    if (dataKey.length === 0) throw new DataKeyRingError('cannot wrap an empty key');
    const iv = pooledRandomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.current, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(aad(this.currentKekId));
    const ciphertext = Buffer.concat([cipher.update(dataKey), cipher.final()]);
    return { kekId: this.currentKekId, wrapped: Buffer.concat([iv, ciphertext, cipher.getAuthTag()]) };
  }

  /** Throws DataKeyRingError for a KEK this ring does not hold, a malformed value or a failed authentication. */
  unwrap(kekId: string, wrapped: Uint8Array): Buffer {
    const kek = this.keks.get(kekId);
    if (!kek) {
      throw new DataKeyRingError(
        `a key is wrapped under the data key-encryption key ${kekId}, which is neither DATA_KEY_ENCRYPTION_KEY nor among DATA_KEY_ENCRYPTION_KEY_PREVIOUS`,
      );
    }
    if (wrapped.length <= IV_BYTES + TAG_BYTES) throw new DataKeyRingError(`a key wrapped under ${kekId} is malformed`);
    const bytes = Buffer.from(wrapped.buffer, wrapped.byteOffset, wrapped.byteLength);
    try {
      const decipher = createDecipheriv('aes-256-gcm', kek, bytes.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
      decipher.setAAD(aad(kekId));
      decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
      return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw new DataKeyRingError(`a key wrapped under the data key-encryption key ${kekId} failed authentication: tampered, or wrapped for another key`);
    }
  }
}
