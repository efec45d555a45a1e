// Which event store the checkpoints in this database count in (table checkpoint_event_store,
// migration 012). A checkpoint is a position in one store's log; in another store's log the same
// position means other events, or none, so following it would silently skip or repeat events:
// EVENTSTORE_URL pointed at an EventStoreDB while the checkpoints came from the PostgreSQL log,
// an EventStoreDB volume wiped while PostgreSQL was kept, or the other way round.
//
// Every checkpointed reader (the projection runner, the pass event forwarder, the pass delivery
// reactor) compares the configured store's identity (EventStore.identity()) with the recorded one
// before it starts, and refuses to start when they differ. The first reader on a database records
// the store it finds, unless a checkpoint is past the end of that store's log. A rebuild of every
// read model adopts the configured store (rebuild.ts, at its switch-over).
import type { Knex } from 'knex';
import type pg from 'pg';
import { ConfigError } from '../shared/config.js';
import { comparePositions, positionToString, type EventStore, type Position } from '../shared/event-store/event-store.js';
import type { Logger } from '../shared/logger.js';

export const REBUILD_COMMAND = 'npx guestpass projections rebuild';

/** The configured event store is not the one the checkpoints in this database count in. */
export class EventStoreMismatch extends ConfigError {
  constructor(
    /** The store the checkpoints count in, or null when none was recorded. */
    readonly recorded: string | null,
    /** The configured store. */
    readonly current: string,
    /** What differs, without the fix. */
    readonly why: string,
  ) {
    super(
      `${why}. A position in one log means other events in another, so the projections, the pass event forwarder and pass ` +
        'delivery refuse to start rather than skip or repeat events. ' +
        `If ${current} is to be the event store from now on, run \`${REBUILD_COMMAND}\` with no projection names: it rebuilds ` +
        'every read model from that store and adopts it, and the forwarder and pass delivery then start again from its beginning ' +
        '(what they did already is recognised and not done twice). Otherwise set EVENTSTORE_URL (EventStoreDB), or DATABASE_URL ' +
        `without EVENTSTORE_URL (the PostgreSQL event store), back to ${recorded ?? 'the store these checkpoints came from'}`,
    );
  }
}

export type CheckpointStoreCheck =
  | { readonly ok: true; readonly identity: string; readonly recordedNow: boolean }
  | { readonly ok: false; readonly identity: string; readonly mismatch: EventStoreMismatch };

/** The store the checkpoints count in, as recorded; null before any was. */
export async function recordedCheckpointStore(knex: Knex | Knex.Transaction): Promise<string | null> {
  const { rows } = await knex.raw<{ rows: Array<{ store_identity: string }> }>('SELECT store_identity FROM checkpoint_event_store');
  return rows[0]?.store_identity ?? null;
}

/**
 * Compares the configured store with the recorded one, recording it when none is (see the
 * header). A mismatch is returned, not thrown: only I/O failures throw, so a caller may retry those.
 */
export async function checkCheckpointStore(knex: Knex, store: EventStore): Promise<CheckpointStoreCheck> {
  const identity = await store.identity();
  const recorded = await recordedCheckpointStore(knex);
  if (recorded === identity) return { ok: true, identity, recordedNow: false };
  if (recorded !== null) return { ok: false, identity, mismatch: differs(recorded, identity) };
  // Nothing recorded: a new database, or checkpoints from before the record existed. Those are
  // taken to be this store's, unless one is past the end of its log.
  const furthest = await furthestCheckpoint(knex);
  if (furthest) {
    const head = await store.headPosition();
    if (comparePositions(furthest.position, head) > 0) {
      const why =
        `the checkpoints in this database are past the end of the configured event store ${identity} ` +
        `(${furthest.name} at ${positionToString(furthest.position)}, the log ends at ${positionToString(head)}): ` +
        'they count events of another store, or this one was emptied';
      return { ok: false, identity, mismatch: new EventStoreMismatch(null, identity, why) };
    }
  }
  await knex.raw('INSERT INTO checkpoint_event_store (store_identity) VALUES (?) ON CONFLICT DO NOTHING', [identity]);
  // Another process may have recorded another store in between: its record stands.
  const now = await recordedCheckpointStore(knex);
  if (now !== identity) return { ok: false, identity, mismatch: differs(now, identity) };
  return { ok: true, identity, recordedNow: true };
}

/** checkCheckpointStore for a reader about to start: throws EventStoreMismatch; returns the store's identity. */
export async function requireCheckpointStore(knex: Knex, store: EventStore, logger?: Logger): Promise<string> {
  const check = await checkCheckpointStore(knex, store);
  if (!check.ok) throw check.mismatch;
  if (check.recordedNow) logger?.info({ eventStore: check.identity }, 'recorded the event store the checkpoints count in');
  return check.identity;
}

/**
 * Makes `identity` the store the checkpoints count in, inside the caller's transaction (the one
 * that moves the rebuilt projections' checkpoints into it). The reactors' checkpoints counted in
 * the other store: they start again from the beginning of this one, which repeats nothing they
 * did, since each skips what it has already done by event id.
 */
export async function adoptCheckpointStore(client: pg.ClientBase, identity: string): Promise<void> {
  await client.query(
    `INSERT INTO checkpoint_event_store (store_identity) VALUES ($1)
     ON CONFLICT (singleton) DO UPDATE SET store_identity = EXCLUDED.store_identity, recorded_at = now()`,
    [identity],
  );
  await client.query('UPDATE forwarder_checkpoints SET commit_position = 0, prepare_position = 0, updated_at = now()');
}

function differs(recorded: string | null, current: string): EventStoreMismatch {
  return new EventStoreMismatch(
    recorded,
    current,
    `the checkpoints in this database count events of event store ${recorded ?? '(none recorded)'}, but the configured event store is ${current}`,
  );
}

async function furthestCheckpoint(knex: Knex): Promise<{ name: string; position: Position } | null> {
  const { rows } = await knex.raw<{ rows: Array<{ name: string; c: string; p: string }> }>(
    `SELECT name, c::text AS c, p::text AS p FROM (
       SELECT name, position_commit AS c, position_prepare AS p FROM projection_checkpoints
       UNION ALL
       SELECT name, commit_position, prepare_position FROM forwarder_checkpoints
     ) AS checkpoints
     ORDER BY c DESC, p DESC LIMIT 1`,
  );
  const row = rows[0];
  return row ? { name: row.name, position: { commit: BigInt(row.c), prepare: BigInt(row.p) } } : null;
}
