// Applies a batch of events to one generation table: loads the rows the batch touches in one
// query, projects in memory (projection.ts), and writes the net changes with one bulk upsert and
// one delete. The live runner does all three in its batch transaction (write); a rebuild calls
// the steps apart (load, save) to overlap its JavaScript work with the database's, and sends
// the rows its table does not hold yet with COPY.
import { finished } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import {
  keysOf,
  keyString,
  projectBatch,
  type AnyProjection,
  type ProjectionEvent,
  type RowChanges,
  type RowKey,
  type StoredRow,
} from './projection.js';
import { quoteIdent, tableColumns } from './generation-tables.js';
import { arrayText, copyText } from './copy-text.js';
import { sqlLiteral } from '../shared/db/sql-literal.js';

export interface WriteResult {
  /** Events that changed a row. */
  readonly applied: number;
  readonly upserted: number;
  readonly deleted: number;
}

/** What a write does to a table. */
export type RowWrites = Pick<RowChanges, 'upserts' | 'deletes'>;

/** The first and last events (ids) whose changes a write carries, for its error message. */
export interface EventSpan {
  readonly first: string;
  readonly last: string;
}

/** What writing a projection's rows needs of it: plain data, so changes can go to another thread. */
export type ProjectionRef = Pick<AnyProjection, 'name' | 'keyColumn'>;

/** Changes ready to send: the upserts already serialised. */
export interface PreparedChanges {
  readonly projection: ProjectionRef;
  readonly table: string;
  readonly upsertJson: string | null;
  /** Rows the table does not hold, as COPY text in the table's column order (prepareBulk only). */
  readonly copy: { readonly columns: readonly string[]; readonly text: string } | null;
  readonly deletes: readonly RowKey[];
  readonly firstEventId: string;
  readonly lastEventId: string;
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
  /** Column list per table, from the catalogue once. */
  private readonly columns = new Map<string, Promise<string[]>>();
  /** Upsert statement per table. */
  private readonly upserts = new Map<string, Promise<string>>();

  /** Load, project and save in the caller's transaction. */
  async write(client: pg.ClientBase, projection: AnyProjection, table: string, events: readonly ProjectionEvent[]): Promise<WriteResult> {
    const keys = keysOf(projection, events); // PoisonEventError propagates untouched
    if (keys.length === 0) return { applied: 0, upserted: 0, deleted: 0 };
    const loaded = await this.load(client, projection, table, keys, events);
    const changes = projectBatch(projection, loaded, events);
    await this.save(client, this.prepare(projection, table, changes, events));
    return { applied: changes.applied, upserted: changes.upserts.length, deleted: changes.deletes.length };
  }

  /** The stored rows of `keys`, by keyString. */
  async load(
    client: pg.ClientBase,
    projection: AnyProjection,
    table: string,
    keys: readonly RowKey[],
    events: readonly ProjectionEvent[],
  ): Promise<Map<string, StoredRow>> {
    if (keys.length === 0) return new Map();
    try {
      const { rows } = await client.query<StoredRow>(
        `SELECT * FROM ${quoteIdent(table)} WHERE ${quoteIdent(projection.keyColumn)} = ANY($1)`,
        [keys],
      );
      return rowsByKey(projection, rows);
    } catch (error) {
      throw tagged(projection.name, events[0]?.id, events.at(-1)?.id, error);
    }
  }

  prepare(projection: AnyProjection, table: string, changes: RowWrites, events: readonly ProjectionEvent[]): PreparedChanges {
    return this.prepareSpan(projection, table, changes, { first: events[0]?.id ?? '-', last: events.at(-1)?.id ?? '-' });
  }

  private prepareSpan(projection: AnyProjection, table: string, changes: RowWrites, span: EventSpan): PreparedChanges {
    return {
      projection: { name: projection.name, keyColumn: projection.keyColumn },
      table,
      // One parameter however many rows: no bind-parameter limit, one round trip. (json, not
      // jsonb: parsing the whole document into jsonb first measured slower overall.)
      upsertJson: changes.upserts.length > 0 ? JSON.stringify(changes.upserts) : null,
      copy: null,
      deletes: changes.deletes,
      firstEventId: span.first,
      lastEventId: span.last,
    };
  }

  /**
   * prepare, for the table's only writer, which knows the keys it holds (`isStored`, by
   * keyString): the other rows go by COPY, which measured 2.3x faster than the JSON upsert on
   * the server and a third cheaper to serialise here.
   */
  async prepareBulk(
    client: pg.ClientBase,
    projection: AnyProjection,
    table: string,
    changes: RowWrites,
    span: EventSpan,
    isStored: (key: string) => boolean,
  ): Promise<PreparedChanges> {
    const stored: StoredRow[] = [];
    const fresh: StoredRow[] = [];
    for (const row of changes.upserts) (isStored(keyString(row[projection.keyColumn] as RowKey)) ? stored : fresh).push(row);
    const prepared = this.prepareSpan(projection, table, { ...changes, upserts: stored }, span);
    if (fresh.length === 0) return prepared;
    const columns = await this.columnsOf(client, table);
    return { ...prepared, copy: { columns, text: copyText(columns, fresh) } };
  }

  /**
   * The load of `keys` as SQL text with the keys inlined, for a multi-statement query (the simple
   * protocol takes no parameters): the runner sends it with other statements in one round trip.
   */
  loadStatement(projection: AnyProjection, table: string, keys: readonly RowKey[]): string {
    return `SELECT * FROM ${quoteIdent(table)} WHERE ${quoteIdent(projection.keyColumn)} = ANY(${arrayLiteral(keys)})`;
  }

  /** The statements of save, values inlined (see loadStatement). */
  async saveStatements(client: pg.ClientBase, changes: PreparedChanges): Promise<string[]> {
    const { projection, table } = changes;
    if (changes.copy) throw new Error('COPY cannot go into a multi-statement query');
    const statements: string[] = [];
    if (changes.deletes.length > 0) {
      statements.push(`DELETE FROM ${quoteIdent(table)} WHERE ${quoteIdent(projection.keyColumn)} = ANY(${arrayLiteral(changes.deletes)})`);
    }
    if (changes.upsertJson !== null) {
      statements.push((await this.upsertSql(client, projection, table)).split(JSON_PARAMETER).join(`${sqlLiteral(changes.upsertJson)}::json`));
    }
    return statements;
  }

  async save(client: pg.ClientBase, changes: PreparedChanges): Promise<void> {
    const { projection, table } = changes;
    try {
      if (changes.deletes.length > 0) {
        await client.query(`DELETE FROM ${quoteIdent(table)} WHERE ${quoteIdent(projection.keyColumn)} = ANY($1)`, [changes.deletes]);
      }
      if (changes.upsertJson !== null) await client.query(await this.upsertSql(client, projection, table), [changes.upsertJson]);
      if (changes.copy) {
        const copy = client.query(copyFrom(`COPY ${quoteIdent(table)} (${changes.copy.columns.map(quoteIdent).join(', ')}) FROM STDIN`));
        copy.end(changes.copy.text);
        await finished(copy);
      }
    } catch (error) {
      throw tagged(projection.name, changes.firstEventId, changes.lastEventId, error);
    }
  }

  private columnsOf(client: pg.ClientBase, table: string): Promise<string[]> {
    let columns = this.columns.get(table);
    if (!columns) {
      columns = tableColumns(client, table);
      columns.catch(() => this.columns.delete(table));
      this.columns.set(table, columns);
    }
    return columns;
  }

  private upsertSql(client: pg.ClientBase, projection: ProjectionRef, table: string): Promise<string> {
    let sql = this.upserts.get(table);
    if (!sql) {
      sql = this.columnsOf(client, table).then((columns) => {
        const t = quoteIdent(table);
        const set = columns
          .filter((c) => c !== projection.keyColumn)
          .map((c) => `${quoteIdent(c)} = EXCLUDED.${quoteIdent(c)}`)
          .join(', ');
        return `INSERT INTO ${t} SELECT * FROM json_populate_recordset(NULL::${t}, ${JSON_PARAMETER})
          ON CONFLICT (${quoteIdent(projection.keyColumn)}) DO UPDATE SET ${set}`;
      });
      sql.catch(() => this.upserts.delete(table));
      this.upserts.set(table, sql);
    }
    return sql;
  }
}

const JSON_PARAMETER = '$1::json';

/** Loaded rows by keyString of their key, as projectBatch takes them. */
export function rowsByKey(projection: AnyProjection, rows: readonly StoredRow[]): Map<string, StoredRow> {
  return new Map(rows.map((row) => [keyString(row[projection.keyColumn] as RowKey), row]));
}

/** Values as an untyped SQL literal of an array (`'{"1","2"}'`): PostgreSQL reads it as the column's array type. */
export function arrayLiteral(values: readonly unknown[]): string {
  return sqlLiteral(arrayText(values));
}

function tagged(projection: string, first: string | undefined, last: string | undefined, error: unknown): ProjectionWriteError {
  return new ProjectionWriteError(projection, first ?? '-', last ?? '-', error);
}
