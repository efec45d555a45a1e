// Where a blue/green rebuild (rebuild.ts) writes: per projection, the generation table of a rebuild
// that stopped (resumed when its version and event store still match) or of the next generation,
// recorded in projection_rebuilds; the orphaned tables of failed rebuilds dropped; and the session
// advisory locks that keep to one rebuild per projection.
import type { Knex } from 'knex';
import type pg from 'pg';
import type { Logger } from '../shared/logger.js';
import { positionToString, START, type Position } from '../shared/event-store/event-store.js';
import type { AnyProjection } from './projection.js';
import { CHECKPOINT_COLUMNS, REBUILD_LOCK, createGenerationTable, generationTableName, quoteIdent, toCheckpoint, type CheckpointRecord } from './generation-tables.js';

export interface Target {
  readonly projection: AnyProjection;
  readonly generation: number;
  readonly table: string;
  position: Position;
  /** Secondary indexes built (beside the second part of the replay). */
  indexed: boolean;
}

/** Session advisory locks on a connection held for the whole rebuild; released by closing it on crash. */
export async function lockRebuilds(knex: Knex, names: readonly string[]): Promise<() => Promise<void>> {
  const client = (await knex.client.acquireConnection()) as pg.ClientBase;
  const locked: string[] = [];
  const release = async () => {
    for (const name of locked) await client.query('SELECT pg_advisory_unlock($1, hashtext($2))', [REBUILD_LOCK, name]).catch(() => undefined);
    await knex.client.releaseConnection(client);
  };
  try {
    for (const name of names) {
      const { rows } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, hashtext($2)) AS ok', [REBUILD_LOCK, name]);
      if (!rows[0]?.ok) throw new Error(`a rebuild of projection ${name} is already running`);
      locked.push(name);
    }
  } catch (error) {
    await release();
    throw error;
  }
  return release;
}

export interface RebuildRecord {
  name: string;
  generation: number;
  table_name: string;
  version: number;
  position_commit: string;
  position_prepare: string;
  indexed: boolean;
  store_identity: string | null;
}

/**
 * Resumes a rebuild of the same version and event store whose table survived, or starts the next
 * generation. `store`: the configured store, and whether this rebuild adopts it. A rebuild left
 * from before migration 012 (store_identity NULL) counted in the recorded store: it is resumed
 * only when that is the configured one.
 */
export async function prepareTargets(
  knex: Knex,
  projections: readonly AnyProjection[],
  logger: Logger,
  store: { readonly identity: string; readonly adopting: boolean },
): Promise<Target[]> {
  const targets: Target[] = [];
  for (const projection of projections) {
    const live = await knex.raw<{ rows: CheckpointRecord[] }>(`SELECT ${CHECKPOINT_COLUMNS} FROM projection_checkpoints WHERE name = ?`, [
      projection.name,
    ]);
    const checkpoint = toCheckpoint(live.rows[0]!);
    const previous = (
      await knex.raw<{ rows: RebuildRecord[] }>(
        `SELECT name, generation, table_name, version, position_commit::text AS position_commit, position_prepare::text AS position_prepare,
           indexed, store_identity FROM projection_rebuilds WHERE name = ?`,
        [projection.name],
      )
    ).rows[0];
    let target: Target | null = null;
    const sameStore = previous ? (previous.store_identity ?? (store.adopting ? null : store.identity)) === store.identity : false;
    if (previous && sameStore && Number(previous.version) === projection.version && previous.generation > checkpoint.generation) {
      const exists = await knex.raw<{ rows: { t: string | null }[] }>('SELECT to_regclass(?)::text AS t', [quoteIdent(previous.table_name)]);
      if (exists.rows[0]?.t) {
        target = {
          projection,
          generation: Number(previous.generation),
          table: previous.table_name,
          position: { commit: BigInt(previous.position_commit), prepare: BigInt(previous.position_prepare) },
          indexed: previous.indexed,
        };
        logger.info({ projection: projection.name, table: target.table, after: positionToString(target.position) }, 'resuming rebuild');
      }
    }
    if (!target) {
      const generation = Math.max(checkpoint.generation, previous ? Number(previous.generation) : 0) + 1;
      const table = await createGenerationTable(knex, projection, generation, { indexes: false });
      await knex.raw(
        `INSERT INTO projection_rebuilds (name, generation, table_name, version, position_commit, position_prepare, store_identity)
         VALUES (?, ?, ?, ?, 0, 0, ?)
         ON CONFLICT (name) DO UPDATE SET generation = EXCLUDED.generation, table_name = EXCLUDED.table_name,
           version = EXCLUDED.version, position_commit = 0, position_prepare = 0, indexed = false,
           store_identity = EXCLUDED.store_identity, started_at = now(), updated_at = now()`,
        [projection.name, generation, table, projection.version, store.identity],
      );
      target = { projection, generation, table, position: START, indexed: false };
      logger.info({ projection: projection.name, table }, 'rebuilding into a new generation table');
    }
    await dropOrphanTables(knex, projection.name, [checkpoint.tableName, target.table], logger);
    targets.push(target);
  }
  return targets;
}

/** Generation tables of a projection that neither serve nor are being built: left by a failed drop or rebuild. */
export async function dropOrphanTables(knex: Knex, name: string, keep: readonly string[], logger: Logger): Promise<void> {
  const { rows } = await knex.raw<{ rows: { t: string }[] }>(
    `SELECT tablename::text AS t FROM pg_tables WHERE schemaname = current_schema() AND tablename ~ ?`,
    [`^${name}_g[0-9]+$`],
  );
  for (const { t } of rows) {
    if (keep.includes(t) || t !== generationTableName(name, Number(t.slice(name.length + 2)))) continue;
    await knex.raw('DROP TABLE IF EXISTS ??', [t]);
    logger.info({ projection: name, table: t }, 'dropped an orphaned generation table');
  }
}
