// Reactors' checkpoints (table forwarder_checkpoints, migration 004): one row per reactor name,
// the position of the last event whose effects are done. Shared by the pass event forwarder (its
// own subscription) and the reactors the projection runner hosts (pass delivery's scheduler).
import type { Knex } from 'knex';
import pg from 'pg';
import type { Logger } from '../shared/logger.js';
import { positionToString, START, type EventStore, type Position, type RecordedEvent, type Subscription } from '../shared/event-store/event-store.js';
import { Stopped, type StoppableRetry } from './stoppable-retry.js';
import { checkCheckpointStore } from './checkpoint-store-identity.js';

interface CheckpointRow {
  name: string;
  commit_position: string;
  prepare_position: string;
  events_forwarded: string | number;
}

export interface ReactorCheckpoint {
  readonly position: Position;
  /** Events the reactor acted on, all time. */
  readonly count: number;
}

export async function readReactorCheckpoint(knex: Knex, name: string): Promise<ReactorCheckpoint> {
  const row = await knex('forwarder_checkpoints').where({ name }).first<CheckpointRow | undefined>();
  if (!row) return { position: START, count: 0 };
  return { position: { commit: BigInt(row.commit_position), prepare: BigInt(row.prepare_position) }, count: Number(row.events_forwarded) };
}

const WRITE_CHECKPOINT_SQL = `INSERT INTO forwarder_checkpoints AS c (name, commit_position, prepare_position, events_forwarded, updated_at)
     VALUES (?, ?, ?, ?, now())
     ON CONFLICT (name) DO UPDATE SET
       commit_position = excluded.commit_position,
       prepare_position = excluded.prepare_position,
       events_forwarded = c.events_forwarded + excluded.events_forwarded,
       updated_at = now()
     WHERE (c.commit_position, c.prepare_position) < (excluded.commit_position, excluded.prepare_position)`;

/** Never moves backwards, even if a second reactor of the same name ran ahead meanwhile. */
export async function writeReactorCheckpoint(knex: Knex | Knex.Transaction, name: string, position: Position, count: number): Promise<void> {
  await knex.raw(WRITE_CHECKPOINT_SQL, [name, position.commit.toString(), position.prepare.toString(), count]);
}

/** writeReactorCheckpoint as one statement with its values inlined, for the runner's multi-statement transaction. */
export function reactorCheckpointStatement(name: string, position: Position, count: number): string {
  const values = [pg.escapeLiteral(name), `'${position.commit}'`, `'${position.prepare}'`, String(Math.trunc(count))];
  let i = 0;
  return WRITE_CHECKPOINT_SQL.replace(/\?/g, () => values[i++]!);
}

/** The checkpoint rows of `names`, locked for the runner's batch (in name order, as every runner takes them). */
export function lockReactorCheckpointsStatement(names: readonly string[]): string {
  return `SELECT name, commit_position::text AS commit, prepare_position::text AS prepare FROM forwarder_checkpoints
     WHERE name IN (${names.map((n) => pg.escapeLiteral(n)).join(', ')}) ORDER BY name FOR UPDATE`;
}

/** The rows lockReactorCheckpointsStatement returns, as positions by name. */
export function reactorPositions(rows: ReadonlyArray<{ name: string; commit: string; prepare: string }>): Map<string, Position> {
  return new Map(rows.map((r) => [r.name, { commit: BigInt(r.commit), prepare: BigInt(r.prepare) }]));
}

/**
 * Checks that the checkpoints count in the configured event store (throwing EventStoreMismatch
 * when they do not), reads the reactor's checkpoint (retrying until the database and the store
 * answer) and follows the store from it. A subscription error is logged, except the one that
 * stopping the reactor causes.
 */
export async function followFromCheckpoint(options: {
  readonly store: EventStore;
  readonly knex: Knex;
  readonly name: string;
  readonly retry: StoppableRetry;
  readonly logger?: Logger;
  /** What the start-up line says, beside the reactor's name and position. */
  readonly context?: Record<string, unknown>;
  readonly batchSize: number;
  readonly onEvents: (events: readonly RecordedEvent[]) => Promise<void>;
}): Promise<{ position: Position; subscription: Subscription }> {
  const { name, logger } = options;
  const check = await options.retry.run('check the event store', () => checkCheckpointStore(options.knex, options.store));
  if (!check.ok) throw check.mismatch;
  if (check.recordedNow) logger?.info({ eventStore: check.identity }, 'recorded the event store the checkpoints count in');
  const { position } = await options.retry.run('read checkpoint', () => readReactorCheckpoint(options.knex, name));
  logger?.info({ reactor: name, from: positionToString(position), ...options.context }, `${name} started`);
  const subscription = options.store.subscribeToAll({
    after: position,
    batchSize: options.batchSize,
    onEvents: options.onEvents,
    onError: (error) => {
      if (!(error instanceof Stopped)) logger?.error({ err: error, reactor: name }, `${name}: subscription error`);
    },
  });
  return { position, subscription };
}
