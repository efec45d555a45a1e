// Generation tables and the views over them. Each read model is a view named as in READ_MODELS
// over its current generation table (`pass_list_g1`, `pass_list_g2`, ...): a blue/green rebuild
// fills the next generation and repoints the view in the transaction that moves the checkpoint,
// so readers never see a half-built table and keep their query text.
import type { Knex } from 'knex';
import type pg from 'pg';
import { START, type Position } from '../shared/event-store/event-store.js';
import { POSITION_COLUMNS, type AnyProjection, type SecondaryIndex } from './projection.js';

export interface Checkpoint {
  readonly name: string;
  readonly generation: number;
  readonly tableName: string;
  readonly version: number;
  readonly position: Position;
  readonly error: string | null;
  readonly updatedAt: Date;
}

export interface CheckpointRecord {
  name: string;
  generation: number;
  table_name: string;
  version: number;
  position_commit: string;
  position_prepare: string;
  error: string | null;
  updated_at: Date;
}

export const CHECKPOINT_COLUMNS =
  'name, generation, table_name, version, position_commit::text AS position_commit, position_prepare::text AS position_prepare, error, updated_at';

export function toCheckpoint(row: CheckpointRecord): Checkpoint {
  return {
    name: row.name,
    generation: Number(row.generation),
    tableName: row.table_name,
    version: Number(row.version),
    position: { commit: BigInt(row.position_commit), prepare: BigInt(row.position_prepare) },
    error: row.error,
    updatedAt: row.updated_at,
  };
}

const SAFE_NAME = /^[a-z][a-z0-9_]{0,40}$/;

export function generationTableName(projection: string, generation: number): string {
  if (!SAFE_NAME.test(projection)) throw new Error(`projection name "${projection}" is not a plain lower-case identifier`);
  return `${projection}_g${generation}`;
}

export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * Creates (replacing a leftover of an abandoned attempt) one generation table with the runner's
 * columns; with `indexes`, also its secondary indexes (a rebuild adds them part way through its replay).
 */
export async function createGenerationTable(
  knex: Knex,
  projection: AnyProjection,
  generation: number,
  options: { indexes: boolean },
): Promise<string> {
  const table = generationTableName(projection.name, generation);
  await knex.transaction(async (trx) => {
    await trx.raw('DROP TABLE IF EXISTS ??', [table]);
    await projection.createTable(trx, table);
    await trx.raw('ALTER TABLE ?? ADD COLUMN _commit numeric NOT NULL, ADD COLUMN _prepare numeric NOT NULL', [table]);
    if (options.indexes) for (const index of projection.indexes ?? []) await trx.raw(indexStatement(table, index, ''));
  });
  return table;
}

function indexStatement(table: string, index: SecondaryIndex, how: '' | 'CONCURRENTLY '): string {
  return `CREATE ${index.unique ? 'UNIQUE ' : ''}INDEX ${how}${quoteIdent(`${table}_${index.suffix}`)} ON ${quoteIdent(table)} ${index.on}`;
}

/**
 * Builds a rebuilt table's secondary indexes over the rows already in it. CONCURRENTLY, because
 * a plain CREATE INDEX holds a transaction id for the whole build, and the event store shows no
 * event written after that transaction began until it ends (readers stop at the oldest running
 * transaction): every reader of the log, the live runner included, would stand still for the
 * build. One at a time: concurrent builds on one table deadlock, and on different tables they
 * wait for each other's snapshots. Resumable: an index an interrupted build left valid is kept,
 * an invalid one (a failed concurrent build) is dropped and built again.
 */
export async function createIndexes(knex: Knex, projection: AnyProjection, table: string, beforeEach: () => void = () => undefined): Promise<void> {
  const { rows } = await knex.raw<{ rows: Array<{ name: string; valid: boolean }> }>(
    `SELECT c.relname::text AS name, i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
     WHERE i.indrelid = to_regclass(?)`,
    [quoteIdent(table)],
  );
  const existing = new Map(rows.map((r) => [r.name, r.valid]));
  const missing = (projection.indexes ?? []).filter((index) => existing.get(`${table}_${index.suffix}`) !== true);
  if (missing.length === 0) return;
  const client = (await knex.client.acquireConnection()) as pg.ClientBase;
  try {
    await client.query(RAISE_MAINTENANCE_WORK_MEM);
    for (const index of missing) {
      const name = `${table}_${index.suffix}`;
      beforeEach();
      // CONCURRENTLY: a plain DROP would block the table's writers while it waits behind a build the
      // interrupted rebuild may have left running on the server.
      if (existing.has(name)) await client.query(`DROP INDEX CONCURRENTLY IF EXISTS ${quoteIdent(name)}`);
      await client.query(indexStatement(table, index, 'CONCURRENTLY '));
    }
  } finally {
    await client.query('RESET maintenance_work_mem').catch(() => undefined); // only ever raised: harmless if left
    await knex.client.releaseConnection(client);
  }
}

// A build sorts in maintenance_work_mem, PostgreSQL's default 64MB: a trigram index over a few
// hundred thousand rows measured a fifth faster with 256MB (its concurrent build's validation
// sorts every entry again). Raised for this session only, and never lowered.
const RAISE_MAINTENANCE_WORK_MEM = `SELECT set_config('maintenance_work_mem',
  greatest(pg_size_bytes(current_setting('maintenance_work_mem')), pg_size_bytes('256MB')) / 1024 || 'kB', false)`;

/** The table's columns in order, from the catalogue. */
export async function tableColumns(client: pg.ClientBase, table: string): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    `SELECT attname::text AS name FROM pg_attribute
     WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped ORDER BY attnum`,
    [quoteIdent(table)],
  );
  if (rows.length === 0) throw new Error(`table ${table} does not exist`);
  return rows.map((r) => r.name);
}

/**
 * Points the read model's view at a generation table, hiding the runner's columns. CREATE OR
 * REPLACE keeps the view's identity (and waiting readers); when a new version changed the
 * columns so that it cannot, the view is dropped and created in the same transaction.
 */
export async function pointView(client: pg.ClientBase, view: string, table: string): Promise<void> {
  const columns = (await tableColumns(client, table)).filter((c) => !(POSITION_COLUMNS as readonly string[]).includes(c));
  const select = `SELECT ${columns.map(quoteIdent).join(', ')} FROM ${quoteIdent(table)}`;
  await client.query('SAVEPOINT point_view');
  try {
    await client.query(`CREATE OR REPLACE VIEW ${quoteIdent(view)} AS ${select}`);
    await client.query('RELEASE SAVEPOINT point_view');
  } catch {
    await client.query('ROLLBACK TO SAVEPOINT point_view');
    await client.query(`DROP VIEW IF EXISTS ${quoteIdent(view)}`);
    await client.query(`CREATE VIEW ${quoteIdent(view)} AS ${select}`);
  }
}

/**
 * Makes sure every projection has a checkpoint, a generation table and its view: on a fresh
 * database generation 1, empty, at START. Safe to call from several processes at once. Returns
 * the projections whose stored version differs from the code's: they need a rebuild.
 */
export async function ensureReadModels(knex: Knex, projections: readonly AnyProjection[]): Promise<AnyProjection[]> {
  const stale: AnyProjection[] = [];
  for (const projection of projections) {
    await inTransaction(knex, async (client, trx) => {
      // Serialises set-up between processes starting together; released at commit.
      await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [SETUP_LOCK, projection.name]);
      const { rows } = await client.query<CheckpointRecord>(
        `SELECT ${CHECKPOINT_COLUMNS} FROM projection_checkpoints WHERE name = $1`,
        [projection.name],
      );
      const existing = rows[0] ? toCheckpoint(rows[0]) : null;
      if (!existing) {
        const table = await createGenerationTable(trx, projection, 1, { indexes: true });
        await pointView(client, projection.name, table);
        await client.query(
          `INSERT INTO projection_checkpoints (name, generation, table_name, version, position_commit, position_prepare)
           VALUES ($1, 1, $2, $3, $4, $5)`,
          [projection.name, table, projection.version, START.commit.toString(), START.prepare.toString()],
        );
        return;
      }
      const { rows: present } = await client.query<{ view: string | null }>('SELECT to_regclass($1)::text AS view', [
        quoteIdent(projection.name),
      ]);
      if (!present[0]?.view) await pointView(client, projection.name, existing.tableName);
      if (existing.version !== projection.version) stale.push(projection);
    });
  }
  return stale;
}

/** Advisory lock namespace of projection set-up and rebuilds (an arbitrary constant). */
export const SETUP_LOCK = 0x67706a31; // "gpj1"
export const REBUILD_LOCK = 0x67706a32; // "gpj2"

/**
 * Runs `work` in a knex transaction, handing it the transaction's raw node-pg connection too. The
 * hot paths use node-pg directly: it takes arrays as parameters (`= ANY($1)`), which knex.raw
 * would expand into lists, and a single JSON parameter for bulk upserts.
 */
export async function inTransaction<T>(knex: Knex, work: (client: pg.ClientBase, trx: Knex.Transaction) => Promise<T>): Promise<T> {
  return knex.transaction(async (trx) => {
    // A transaction's knex client hands out the transaction's own connection.
    const client = (await trx.client.acquireConnection()) as pg.ClientBase;
    return work(client, trx);
  });
}
