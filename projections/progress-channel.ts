// The NOTIFY channel that announces committed projection progress to waiters (watermark.ts).
// Payload: space-separated `name=commit/prepare` pairs, well under NOTIFY's 8000-byte limit.
import { parsePosition, positionToString, type Position } from '../shared/event-store/event-store.js';

export const PROGRESS_CHANNEL = 'projection_progress';
/** Announces the projections whose rows a committed batch changed; payload: their names, space-separated. */
export const ROWS_CHANGED_CHANNEL = 'read_model_changed';

export interface ProjectionProgress {
  readonly name: string;
  readonly position: Position;
}

export function encodeProgress(progress: readonly ProjectionProgress[]): string {
  return progress.map((p) => `${p.name}=${positionToString(p.position)}`).join(' ');
}

/** Unknown or malformed parts are ignored: a waiter then falls back to reading checkpoints. */
export function decodeProgress(payload: string): ProjectionProgress[] {
  const out: ProjectionProgress[] = [];
  for (const part of payload.split(' ')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    try {
      out.push({ name: part.slice(0, eq), position: parsePosition(part.slice(eq + 1)) });
    } catch {
      // ignore
    }
  }
  return out;
}
