// A pass's QR code as inline SVG, drawn on the server with the `qrcode` package, and a small
// in-memory cache of the drawings.
//
// `qrcode` draws one SVG of two paths (the white quiet zone, the dark modules). We keep only the
// numbers and path data it produced, checked against that exact shape, and the page rebuilds the
// element through the escaping `html` template with its own accessible name: no markup from a
// library reaches the page unchecked.
//
// Why a cache: drawing one code costs about 1 ms of CPU, so a batch of 10 costs 10 ms a page view,
// five times over the pass page's budget (bench/pass-page.ts). A QR value is a bearer credential,
// so the cache is bounded in count and in time, keyed by the value's SHA-256 (the value itself is
// never a key), lives in this process's memory only, and an entry never outlives the pass being
// shown: it expires after a short TTL or at the end of the pass's window, whichever is first, and
// the page drops it the moment it finds the pass revoked, used or expired.
import { createHash } from 'node:crypto';
import QRCode from 'qrcode';

/** The parts of one drawn QR code: a square of `size` units (quiet zone included). */
export interface QrSvg {
  readonly size: number;
  /** Path data of the light background. */
  readonly background: string;
  /** Path data of the dark modules (drawn with a stroke of one unit). */
  readonly modules: string;
}

export const QR_SVG_OPTIONS = { type: 'svg', errorCorrectionLevel: 'M', margin: 4 } as const;

const QRCODE_SVG =
  /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" viewBox="0 0 (\d+) \1" shape-rendering="crispEdges"><path fill="#ffffff" d="([MmHhVvZz0-9. -]+)"\/><path stroke="#000000" d="([MmHhVvZz0-9. -]+)"\/><\/svg>\s*$/;

/** Draws `value` (1 ms or so of CPU); throws when `qrcode` answers in a shape this module does not know. */
export async function drawQrSvg(value: string): Promise<QrSvg> {
  const svg = await QRCode.toString(value, QR_SVG_OPTIONS);
  const m = QRCODE_SVG.exec(svg);
  if (!m) throw new Error('qrcode produced an SVG of an unexpected shape');
  return { size: Number(m[1]), background: m[2]!, modules: m[3]! };
}

export interface QrSvgCacheOptions {
  /** Entries kept at most; the least recently used goes first. */
  readonly maxEntries?: number;
  /** Longest an entry lives, from when it was drawn. */
  readonly ttlMs?: number;
  /** The clock (tests). */
  readonly now?: () => number;
}

interface Entry {
  readonly svg: QrSvg;
  readonly expiresAt: number;
}

function keyOf(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('base64url');
}

/** Bounded LRU of drawn QR codes, with a time to live per entry. */
export class QrSvgCache {
  readonly maxEntries: number;
  readonly ttlMs: number;
  private readonly now: () => number;
  private readonly entries = new Map<string, Entry>();
  private sweptAt = 0;

  constructor(options: QrSvgCacheOptions = {}) {
    this.maxEntries = options.maxEntries ?? 2000;
    this.ttlMs = options.ttlMs ?? 60_000;
    this.now = options.now ?? Date.now;
    if (!(this.maxEntries >= 1) || !(this.ttlMs > 0)) throw new RangeError('a QR cache needs room for an entry and a positive TTL');
  }

  get size(): number {
    return this.entries.size;
  }

  /** The drawing of `value`, from the cache or drawn now; kept at most until `visibleUntil` (ms since the epoch). */
  async draw(value: string, visibleUntil: number): Promise<QrSvg> {
    const key = keyOf(value);
    const now = this.now();
    this.sweep(now);
    const hit = this.entries.get(key);
    if (hit !== undefined) {
      this.entries.delete(key);
      if (hit.expiresAt > now) {
        this.entries.set(key, hit); // most recently used goes last
        return hit.svg;
      }
    }
    const svg = await drawQrSvg(value);
    const expiresAt = Math.min(now + this.ttlMs, visibleUntil);
    if (expiresAt > now) {
      this.entries.delete(key);
      this.entries.set(key, { svg, expiresAt });
      while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    }
    return svg;
  }

  /**
   * Drops every expired entry, at most twice a TTL: an entry nobody asks for again must not wait
   * for the LRU bound to push it out.
   */
  private sweep(now: number): void {
    if (now - this.sweptAt < this.ttlMs / 2) return;
    this.sweptAt = now;
    for (const [key, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(key);
  }

  /** Drops the drawing of `value`: its pass is no longer shown. */
  forget(value: string): void {
    this.entries.delete(keyOf(value));
  }

  /** True when a drawing of `value` is held (tests). */
  holds(value: string): boolean {
    const entry = this.entries.get(keyOf(value));
    return entry !== undefined && entry.expiresAt > this.now();
  }
}
