// Cryptographically secure random bytes drawn from a pool filled in blocks. Each call to
// crypto.randomBytes costs a few microseconds whatever its size (measured 6 us for 12 bytes, and
// far more on a busy machine), and a bulk write asks for seven small values per member (its id,
// two data keys, two seal IVs, two wrap IVs): one fill of 4 KiB serves hundreds of them. Node's
// own randomUUID keeps such a cache too. Every byte is handed out once; a refill takes a new
// buffer, so nothing handed out is ever overwritten.
import { randomFillSync } from 'node:crypto';

const POOL_BYTES = 4096;

let pool = Buffer.alloc(0);
let offset = 0;

/** `size` fresh random bytes in a buffer of their own. */
export function pooledRandomBytes(size: number): Buffer {
  if (size > POOL_BYTES / 4) return randomFillSync(Buffer.allocUnsafe(size));
  if (offset + size > pool.length) {
    pool = randomFillSync(Buffer.allocUnsafe(POOL_BYTES));
    offset = 0;
  }
  // A copy: a caller that keeps it (a data key) must not keep the whole pool alive.
  const bytes = Buffer.from(pool.subarray(offset, offset + size));
  offset += size;
  return bytes;
}
