// A progress line on stderr for long operator commands (projection rebuilds). On a terminal it
// redraws one line with \r; otherwise (CI, piped into a file) it prints a plain line now and then.
import type { RebuildProgress } from './rebuild.js';

export interface ProgressBarOptions {
  readonly stream?: NodeJS.WriteStream;
  readonly label?: string;
  /** Minimum time between two redraws on a terminal. */
  readonly redrawMs?: number;
  /** Time between two plain lines when not on a terminal. */
  readonly lineEveryMs?: number;
  /** Overrides stream.isTTY (tests). */
  readonly tty?: boolean;
}

export interface ProgressUpdate {
  /** 0..1, or null when unknown (then only the counter shows). */
  readonly fraction: number | null;
  /** What the fraction is a share of, shown after the percentage (`of the log by position`). */
  readonly of?: string;
  /** What has been done, e.g. `120,000 events`. */
  readonly detail: string;
}

const WIDTH = 28;
/** One formatter: toLocaleString builds a new one per call, which is slow. */
const NUMBER = new Intl.NumberFormat('en');

export class ProgressBar {
  private readonly stream: NodeJS.WriteStream;
  private readonly tty: boolean;
  private last = 0;
  private drawn = false;
  private readonly startedAt = Date.now();

  constructor(private readonly options: ProgressBarOptions = {}) {
    this.stream = options.stream ?? process.stderr;
    this.tty = options.tty ?? Boolean(this.stream.isTTY);
  }

  update(update: ProgressUpdate, force = false): void {
    const now = Date.now();
    const every = this.tty ? (this.options.redrawMs ?? 100) : (this.options.lineEveryMs ?? 5000);
    if (!force && this.drawn && now - this.last < every) return;
    this.last = now;
    this.drawn = true;
    const text = this.render(update, now);
    if (this.tty) {
      const columns = this.stream.columns || 100;
      this.stream.write(`\r${text.slice(0, columns - 1)}\x1b[K`);
    } else {
      this.stream.write(`${text}\n`);
    }
  }

  /** Draws the final state and ends the line. */
  finish(update: ProgressUpdate): void {
    this.update(update, true);
    if (this.tty) this.stream.write('\n');
  }

  render(update: ProgressUpdate, now = Date.now()): string {
    const label = this.options.label ? `${this.options.label} ` : '';
    const elapsed = formatDuration(now - this.startedAt);
    if (update.fraction === null) return `${label}${update.detail} (${elapsed})`;
    const fraction = Math.max(0, Math.min(1, update.fraction));
    const filled = Math.round(fraction * WIDTH);
    const bar = this.tty ? `[${'#'.repeat(filled)}${'-'.repeat(WIDTH - filled)}] ` : '';
    const of = update.of ? ` of ${update.of}` : '';
    return `${label}${bar}${(fraction * 100).toFixed(1).padStart(5)}%${of}  ${update.detail} (${elapsed})`;
  }
}

function formatDuration(ms: number): string {
  const s = Math.floor(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

/**
 * Shows a rebuild's progress on a bar: pass as `onProgress` to rebuildProjections. The share is of
 * the log's position range (RebuildProgress.fraction), which is no count of events in
 * EventStoreDB (a byte offset): it says so, and the events are counted beside it.
 */
export function showRebuildProgress(bar: ProgressBar): (progress: RebuildProgress) => void {
  return (p) => {
    const detail = `${p.projections.join(', ')}: ${NUMBER.format(p.events)} events read, ${NUMBER.format(Math.round(p.eventsPerSecond))}/s, ${p.phase}`;
    if (p.phase === 'done') bar.finish({ fraction: 1, of: REBUILD_SHARE_OF, detail });
    else bar.update({ fraction: p.fraction, of: REBUILD_SHARE_OF, detail }, p.phase !== 'replaying');
  };
}

const REBUILD_SHARE_OF = 'the log by position';
