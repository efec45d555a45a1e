// The rows an import has seen, by a 64-bit digest of a key (an email's keyed hash, an external
// id, a matched member's id): the row number each key was first seen on. An import holds one
// entry per key of the file (two or three per row), so they are kept in typed arrays, 24 to 48
// bytes each, rather than in Maps of strings (about 70): a 200,000-row file's indexes stay under
// 20 MB, and the collector, which sizes the heap to what survives, lets the heap grow less.
//
// Two keys with the same 64-bit digest count as one: among a million keys of one index that
// happens with odds of about 1 in 40 million, and refuses a row as a repeat of another.
const EMPTY = 0;

export class RowIndex {
  private hi = new Uint32Array(1024);
  private lo = new Uint32Array(1024);
  /** Row number of each slot; EMPTY for a free slot (rows are numbered from 1). */
  private rows = new Int32Array(1024);
  private size = 0;

  /** The row `digest` was first seen on, or undefined. */
  get(digest: Digest): number | undefined {
    const slot = this.find(digest);
    return this.rows[slot] === EMPTY ? undefined : this.rows[slot];
  }

  /** Records `row` for `digest` unless it is already there; row numbers start at 1. */
  add(digest: Digest, row: number): void {
    if (row < 1) throw new RangeError('row numbers start at 1');
    const slot = this.find(digest);
    if (this.rows[slot] !== EMPTY) return;
    this.hi[slot] = digest.hi;
    this.lo[slot] = digest.lo;
    this.rows[slot] = row;
    if (++this.size * 2 > this.rows.length) this.grow();
  }

  /** The slot holding `digest`, else the free slot where it would go (linear probing, at most half full). */
  private find({ hi, lo }: Digest): number {
    const mask = this.rows.length - 1;
    for (let slot = lo & mask; ; slot = (slot + 1) & mask) {
      if (this.rows[slot] === EMPTY || (this.hi[slot] === hi && this.lo[slot] === lo)) return slot;
    }
  }

  private grow(): void {
    const { hi, lo, rows } = this;
    this.hi = new Uint32Array(rows.length * 2);
    this.lo = new Uint32Array(rows.length * 2);
    this.rows = new Int32Array(rows.length * 2);
    for (let slot = 0; slot < rows.length; slot++) {
      if (rows[slot] === EMPTY) continue;
      const to = this.find({ hi: hi[slot]!, lo: lo[slot]! });
      this.hi[to] = hi[slot]!;
      this.lo[to] = lo[slot]!;
      this.rows[to] = rows[slot]!;
    }
  }
}

/** 64 bits of a key, as two unsigned 32-bit halves. */
export interface Digest {
  readonly hi: number;
  readonly lo: number;
}

/** The first 64 bits of a hex string of at least 16 digits that is already a uniform hash (an HMAC, random ids). */
export function hexDigest(hex: string): Digest {
  return { hi: Number.parseInt(hex.slice(0, 8), 16) >>> 0, lo: Number.parseInt(hex.slice(8, 16), 16) >>> 0 };
}

/**
 * A digest of any text (an external id): two 32-bit multiply-xorshift lanes over its UTF-16 code
 * units, mixed at the end (cyrb53's, kept to 64 bits). Not a cryptographic hash: a file made to
 * collide only gets one of its rows refused as a repeat, and this costs a tenth of a SHA-256
 * (which measured 5 us a row, mostly creating the hash object).
 */
export function textDigest(text: string): Digest {
  let h1 = 0xdeadbeef ^ text.length;
  let h2 = 0x41c6ce57 ^ text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return { hi: h2 >>> 0, lo: h1 >>> 0 };
}
