// Search on contact data without decrypting rows: a keyed hash (HMAC-SHA256) of the normalised
// value, one derived key per kind, so that an email's hash never matches a phone's. Whole-value
// match only. The key is the service's contact search key (never a data key): a database dump
// alone gives hashes no one can test guesses against.
import { createHmac } from 'node:crypto';

export type ContactKind = 'email' | 'phone';

/** Email lower-cased and trimmed; phone as its digits (`+44 20 7946 0012` and `+442079460012` match). */
export function normaliseContact(kind: ContactKind, value: string): string {
  return kind === 'email' ? value.trim().toLowerCase() : value.replace(/\D/g, '');
}

export interface ContactHasher {
  /** Hex HMAC of the normalised value. */
  hash(kind: ContactKind, value: string): string;
}

export class HmacContactHasher implements ContactHasher {
  private readonly keys: Readonly<Record<ContactKind, Buffer>>;

  constructor(searchKey: Buffer) {
    if (searchKey.length < 32) throw new Error('the contact search key must be at least 32 bytes');
    const derive = (kind: ContactKind) => createHmac('sha256', searchKey).update(`guestpass contact search v1 ${kind}`).digest();
    this.keys = { email: derive('email'), phone: derive('phone') };
  }

  hash(kind: ContactKind, value: string): string {
    return createHmac('sha256', this.keys[kind]).update(normaliseContact(kind, value), 'utf8').digest('hex');
  }
}
