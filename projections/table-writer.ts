// Applies a batch of events to one generation table: loads the rows the batch touches in one
// query, projects in memory (projection.ts), and writes the net changes with one bulk upsert and
// one delete. Runs inside the caller's transaction, which also moves the checkpoint.
import type pg from 'pg';
import { keysOf, keyString, projectBatch, type AnyProjection, type ProjectionEvent, type StoredRow } from './projection.js';
import { quoteIdent, tableColumns } from './generation-tables.js';

export interface WriteResult {
  /** Events that changed a row. */
  readonly applied: number;
  readonly upserted: number;
  readonly deleted: number;
}

/** A database error writing a projection's rows, tagged with the projection and the batch. */
export class ProjectionWriteError extends Error {
  override readonly name = 'ProjectionWriteError';
  constructor(
    readonly projection: string,
    readonly firstEventId: string,
    readonly lastEventId: string,
    override readonly cause: unknown,
  ) {
    super(
      `projection ${projection} failed to write events ${firstEventId}..${lastEventId}: ` +
        (cause instanceof Error ? cause.message : String(cause)),
    );
  }
}

export class TableWriter {
  /** Upsert statement per table: the column list comes from the catalogue once. */
  private readonly upserts = new Map<string, Promise<string>>();

  async write(client: pg.ClientBase, projection: AnyProjection, table: string, events: readonly ProjectionEvent[]): Promise<WriteResult> {
    const keys = keysOf(projection, events); // PoisonEventError propagates untouched
    if (keys.length === 0) return { applied: 0, upserted: 0, deleted: 0 };
    const pk = quoteIdent(projection.keyColumn);
    const t = quoteIdent(table);
    let loaded: Map<string, StoredRow>;
    try {
      const { rows } = await client.query<StoredRow>(`SELECT * FROM ${t} WHERE ${pk} = ANY($1)`, [keys]);
      loaded = new Map(rows.map((row) => [keyString(row[projection.keyColumn] as string | number), row]));
    } catch (error) {
      throw this.tagged(projection, events, error);
    }
    const changes = projectBatch(projection, loaded, events);
    try {
      if (changes.deletes.length > 0) await client.query(`DELETE FROM ${t} WHERE ${pk} = ANY($1)`, [changes.deletes]);
      if (changes.upserts.length > 0) {
        // One parameter however many rows: no bind-parameter limit, one round trip.
        await client.query(await this.upsertSql(client, projection, table), [JSON.stringify(changes.upserts)]);
      }
    } catch (error) {
      throw this.tagged(projection, events, error);
    }
    return { applied: changes.applied, upserted: changes.upserts.length, deleted: changes.deletes.length };
  }

  private upsertSql(client: pg.ClientBase, projection: AnyProjection, table: string): Promise<string> {
    let sql = this.upserts.get(table);
    if (!sql) {
      sql = tableColumns(client, table).then((columns) => {
        const t = quoteIdent(table);
        const set = columns
          .filter((c) => c !== projection.keyColumn)
          .map((c) => `${quoteIdent(c)} = EXCLUDED.${quoteIdent(c)}`)
          .join(', ');
        return `INSERT INTO ${t} SELECT * FROM json_populate_recordset(NULL::${t}, $1::json)
          ON CONFLICT (${quoteIdent(projection.keyColumn)}) DO UPDATE SET ${set}`;
      });
      sql.catch(() => this.upserts.delete(table));
      this.upserts.set(table, sql);
    }
    return sql;
  }

  private tagged(projection: AnyProjection, events: readonly ProjectionEvent[], error: unknown): ProjectionWriteError {
    return new ProjectionWriteError(projection.name, events[0]?.id ?? '-', events.at(-1)?.id ?? '-', error);
  }
}
