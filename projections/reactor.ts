// The seam for side effects the runner will host next to projections (the Kafka forwarder, pass
// delivery). Not run yet: a reactor gets its own checkpoint row and, unlike a projection, cannot
// share a transaction with its effect, so it is at-least-once and must be idempotent by event id.
import type { RecordedEvent } from '../shared/event-store/event-store.js';

export interface Reactor {
  /** Checkpoint name; must not collide with a projection's. */
  readonly name: string;
  readonly handles: readonly string[];
  /**
   * Performs the side effects of a batch, in order. Resolves once they are durable elsewhere
   * (broker acknowledged, mail accepted); the runner then moves the reactor's checkpoint. A
   * repeat delivery after a crash carries the same event ids, which the effect must dedupe on.
   */
  react(events: readonly RecordedEvent[]): Promise<void>;
}
