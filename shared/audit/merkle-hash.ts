// RFC 9162 2.1.1 hashing: a leaf is SHA-256(0x00 || entry), an interior node SHA-256(0x01 || left
// || right), the empty tree's root SHA-256 of nothing. The 0x00 / 0x01 prefixes keep a leaf from
// ever passing for a node (second-preimage resistance of the tree).
//
// One-shot crypto.hash over a reused scratch buffer (prefix and input copied in): about half the
// cost of a createHash object with its updates, which the verifier and the notary pay per leaf.
import { createHash, hash } from 'node:crypto';

export const HASH_BYTES = 32;

/** Grown on demand; only ever used synchronously, so one per thread is enough. */
let scratch = Buffer.allocUnsafe(4096);

function prefixed(prefix: number, parts: readonly Uint8Array[], length: number): Buffer {
  if (scratch.length < length + 1) scratch = Buffer.allocUnsafe(Math.max(length + 1, scratch.length * 2));
  scratch[0] = prefix;
  let at = 1;
  for (const part of parts) {
    scratch.set(part, at);
    at += part.length;
  }
  return scratch.subarray(0, at);
}

export function leafHash(entry: Uint8Array): Buffer {
  return hash('sha256', prefixed(0, [entry], entry.length), 'buffer');
}

/** leafHash of a text's UTF-8 bytes, encoded straight into the scratch buffer (no Buffer per leaf). */
export function leafHashOfText(text: string): Buffer {
  // UTF-8 takes at most 3 bytes per UTF-16 unit.
  const room = 1 + 3 * text.length;
  if (scratch.length < room) scratch = Buffer.allocUnsafe(Math.max(room, scratch.length * 2));
  scratch[0] = 0;
  const written = scratch.write(text, 1, 'utf8');
  return hash('sha256', scratch.subarray(0, 1 + written), 'buffer');
}

export function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  return hash('sha256', prefixed(1, [left, right], left.length + right.length), 'buffer');
}

/** MTH({}) = SHA-256(). */
export const EMPTY_ROOT: Buffer = createHash('sha256').digest();

export function toHex(hash: Uint8Array): string {
  return Buffer.from(hash.buffer, hash.byteOffset, hash.byteLength).toString('hex');
}

/** A 32-byte hash from 64 lower-case hex digits; throws on anything else. */
export function fromHex(text: unknown): Buffer {
  if (typeof text !== 'string' || !/^[0-9a-f]{64}$/.test(text)) throw new Error('not a SHA-256 hash in hex');
  return Buffer.from(text, 'hex');
}
