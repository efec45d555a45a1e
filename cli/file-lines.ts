// A file's lines as bytes, read in large chunks into one reused buffer: no string per line and
// no read-ahead queue (readline builds a string for every line and reads on without bound), so
// memory stays at the buffer whatever the file's size. A line longer than the buffer grows it.
import { open } from 'node:fs/promises';

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/**
 * Calls `onChunk` with `file` in chunks of whole lines, in order (a last line without a newline
 * counts too) and the bytes read so far. A chunk is a view into a buffer reused once `onChunk`
 * returns or its promise settles.
 */
export async function forEachChunk(
  file: string,
  onChunk: (lines: Buffer, bytesRead: number) => void | Promise<void>,
  options: { readonly chunkBytes?: number } = {},
): Promise<void> {
  const handle = await open(file, 'r');
  try {
    let buffer = Buffer.allocUnsafeSlow(options.chunkBytes ?? 1 << 22);
    let filled = 0;
    let total = 0;
    for (;;) {
      if (filled === buffer.length) {
        const larger = Buffer.allocUnsafeSlow(buffer.length * 2);
        buffer.copy(larger, 0, 0, filled);
        buffer = larger;
      }
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, null);
      total += bytesRead;
      filled += bytesRead;
      const end = bytesRead === 0 ? filled : buffer.lastIndexOf(NEWLINE, filled - 1) + 1;
      if (end > 0) {
        const pending = onChunk(buffer.subarray(0, end), total);
        if (pending) await pending;
      }
      if (bytesRead === 0) return;
      buffer.copy(buffer, 0, end, filled);
      filled -= end;
    }
  } finally {
    await handle.close();
  }
}

/** The lines of a chunk, without their line ends (views into the chunk). */
export function* linesOf(chunk: Buffer): Generator<Buffer> {
  let start = 0;
  while (start < chunk.length) {
    let stop = chunk.indexOf(NEWLINE, start);
    if (stop < 0) stop = chunk.length;
    const next = stop + 1;
    if (stop > start && chunk[stop - 1] === CARRIAGE_RETURN) stop--;
    yield chunk.subarray(start, stop);
    start = next;
  }
}
