// The pass event forwarder as work that runs only while its process holds a lock
// (shared/db/leadership-lock.ts): on Kafka, the forwarder's own lock, one active among the
// processes that could forward (each would otherwise publish every pass event again); on the
// in-process bus of `npm start`, the door-gateway's (door-gateway/embedded.ts), since only this
// process's gateway reads that bus. A new term resumes from the checkpoint.
import type { Knex } from 'knex';
import type { Logger } from '../shared/logger.js';
import type { EventStore } from '../shared/event-store/event-store.js';
import type { PassBus } from '../shared/pass-bus/pass-bus.js';
import { runWhileLeader, type LeaderRole } from '../shared/db/leadership-lock.js';
import { SESSION_LOCKS } from '../shared/db/session-lock.js';
import { PassEventForwarder } from './pass-event-forwarder.js';
import { Stopped } from './stoppable-retry.js';

export interface ForwarderWorkDeps {
  readonly store: EventStore;
  readonly knex: Knex;
  readonly bus: PassBus;
  readonly logger: Logger;
}

/**
 * Starts a forwarder and resolves at once with what stops it: its start retries until the bus and
 * the database answer (a lock lost meanwhile must not wait for that), and its stop ends those retries.
 */
export async function startForwarding(deps: ForwarderWorkDeps): Promise<() => Promise<void>> {
  const forwarder = new PassEventForwarder(deps);
  const starting = forwarder.start().catch((error: unknown) => {
    if (!(error instanceof Stopped)) deps.logger.error({ err: error }, 'pass event forwarder failed to start');
  });
  return async () => {
    await forwarder.stop();
    await starting;
  };
}

/** The forwarder while this process holds the forwarder's lock; a standby otherwise. */
export function runPassEventForwarder(deps: ForwarderWorkDeps): LeaderRole {
  return runWhileLeader({
    knex: deps.knex,
    key: SESSION_LOCKS.passEventForwarder,
    holder: 'pass event forwarder',
    logger: deps.logger,
    start: () => startForwarding(deps),
  });
}
