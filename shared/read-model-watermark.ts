import type { Position } from './event-store/event-store.js';

/**
 * Read-your-writes: a write answers only once the projections that serve the caller's next
 * read have applied its events (or the wait times out; the write itself has succeeded either way).
 */
export interface ReadModelWatermark {
  /** True when every named projection (all, when omitted) has reached `position`; false on time-out. */
  waitFor(position: Position, timeoutMs: number, projections?: readonly string[]): Promise<boolean>;
  close(): Promise<void>;
}
