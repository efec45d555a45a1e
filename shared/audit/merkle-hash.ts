// RFC 9162 2.1.1 hashing: a leaf is SHA-256(0x00 || entry), an interior node SHA-256(0x01 || left
// || right), the empty tree's root SHA-256 of nothing. The 0x00 / 0x01 prefixes keep a leaf from
// ever passing for a node (second-preimage resistance of the tree).
import { createHash } from 'node:crypto';

export const HASH_BYTES = 32;
const LEAF_PREFIX = Buffer.from([0]);
const NODE_PREFIX = Buffer.from([1]);

export function leafHash(entry: Uint8Array): Buffer {
  return createHash('sha256').update(LEAF_PREFIX).update(entry).digest();
}

export function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  return createHash('sha256').update(NODE_PREFIX).update(left).update(right).digest();
}

/** MTH({}) = SHA-256(). */
export const EMPTY_ROOT: Buffer = createHash('sha256').digest();

export function toHex(hash: Uint8Array): string {
  return Buffer.from(hash).toString('hex');
}

/** A 32-byte hash from 64 lower-case hex digits; throws on anything else. */
export function fromHex(text: unknown): Buffer {
  if (typeof text !== 'string' || !/^[0-9a-f]{64}$/.test(text)) throw new Error('not a SHA-256 hash in hex');
  return Buffer.from(text, 'hex');
}
