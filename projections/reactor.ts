// The seams for side effects the runner hosts next to projections.
//
// A Reactor (the Kafka forwarder) acts outside the database: it cannot share a transaction with
// its effect, so it is at-least-once and must be idempotent by event id. Not run by the runner yet.
//
// A TransactionalReactor (pass delivery's scheduler) records its effect as rows of its own (a work
// list that a worker acts on later): the runner writes them in each batch's transaction, together
// with the read models and the reactor's own checkpoint (forwarder_checkpoints), so every event's
// effect is recorded exactly once whatever crashes, and no second subscription reads the log for it.
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

export interface TransactionalReactor {
  /** Checkpoint row name in forwarder_checkpoints; must not collide with another reactor's. */
  readonly name: string;
  readonly handles: readonly string[];
  /**
   * The statements that record the effects of `events` (only those after the reactor's stored
   * checkpoint; raw, as the log holds them), values inlined: they join the runner's
   * multi-statement transaction. Each must be idempotent (a replay after a checkpoint reset
   * repeats them). `acted` counts the effects; `committed` is called once they are committed
   * (a consumer of the rows in this process starts at once).
   */
  statements(events: readonly RecordedEvent[]): { readonly statements: readonly string[]; readonly acted: number; readonly committed?: () => void };
}
