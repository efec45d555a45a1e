// The PostgreSQL event store: the embedded default. Table and index in shared/db/migrations/001_event_store.ts.
//
// Global order is (transaction_id, global_position), not global_position alone: a sequence value
// is taken when a row is inserted, but the row only becomes visible when its transaction commits,
// so a reader ordering by the sequence could pass a gap that a slow transaction fills later and
// skip that event for good. Readers therefore only see rows whose writing transaction is older
// than every transaction still running (pg_snapshot_xmin): no later commit can sort before them.
//
// Its subscriptions' LISTEN connection is append-notifications.ts and their catch-up loop
// polling-subscription.ts. What is left here (a little past 500 lines) is one piece: the append
// paths (one, batched, many) and the reads share the SQL, the row mapping and the pool.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createPgPool } from '../db/pg-pool.js';
import {
  START,
  WrongExpectedVersion,
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type Position,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type StreamAppend,
  type StreamRead,
  type SubscribeOptions,
  type Subscription,
} from './event-store.js';
import { AppendNotifications } from './append-notifications.js';
import { PollingSubscription } from './polling-subscription.js';

export interface PostgresEventStoreOptions {
  /** End the pool on close(); true when the store created it. */
  readonly ownsPool?: boolean;
  /** Channel NOTIFYed after every append commits; subscriptions LISTEN on it. */
  readonly channel?: string;
  /**
   * How often an idle subscription looks again without a notification: the oldest running
   * transaction can finish (and so reveal committed events) without any append notifying.
   */
  readonly pollIntervalMs?: number;
}

const DEFAULT_CHANNEL = 'events_appended';
const DEFAULT_POLL_INTERVAL_MS = 250;
const MAX_ANY_ATTEMPTS = 10;
const UNIQUE_VIOLATION = '23505';
const STREAM_POSITION_KEY = 'events_stream_position_key';
const EVENT_ID_KEY = 'events_event_id_key';

// Positions are cast to text: int8 and xid8 exceed JS numbers, and shared/db/knex.ts installs a
// global int8 parser that returns numbers where they fit, which must not decide our types.
const COLUMNS = `global_position::text AS prepare, transaction_id::text AS commit, stream_name, stream_position,
  event_id::text AS event_id, type, data, metadata, recorded_at`;

// Only rows of transactions older than the oldest running one: see the header.
const VISIBLE = 'transaction_id < pg_snapshot_xmin(pg_current_snapshot())';

// One statement, so one round trip and its own transaction: read the stream's head and insert
// only if it is where the caller expects. A concurrent writer that read the same head loses on
// the (stream_name, stream_position) key.
//
// No NOTIFY in here: PostgreSQL holds one cluster-wide lock from a notifying transaction's
// pre-commit until after its commit record is flushed, which serialises every appender on the
// WAL fsync and defeats group commit. Measured with bench/event-append.ts at 8 appenders, that
// made an append 2.3-4.2x a bare INSERT; notifying after the commit instead makes it 1.1-1.4x.
const APPEND_SQL = `
WITH head AS (
  SELECT max(stream_position) AS revision FROM events WHERE stream_name = $1
), allowed AS (
  SELECT revision FROM head
  WHERE CASE $3::text WHEN 'any' THEN true WHEN 'no_stream' THEN revision IS NULL ELSE revision = $4::int END
), inserted AS (
  INSERT INTO events (stream_name, stream_position, event_id, type, data, metadata)
  SELECT $1, coalesce(allowed.revision, -1) + e.ord::int,
         (e.value->>'id')::uuid, e.value->>'type', e.value->'data', e.value->'metadata'
  FROM allowed, jsonb_array_elements($2::jsonb) WITH ORDINALITY AS e(value, ord)
  ORDER BY e.ord
  RETURNING stream_position, global_position, transaction_id
), last AS (
  SELECT * FROM inserted ORDER BY stream_position DESC LIMIT 1
)
SELECT (SELECT revision FROM head) AS actual, last.stream_position AS revision,
       last.transaction_id::text AS commit, last.global_position::text AS prepare
FROM (SELECT 1) AS one LEFT JOIN last ON true`;

// The same for several streams at once (group commit): one head per stream, each checked against
// its own expectation; rows only for the streams whose check passed. A concurrent writer makes
// the whole statement fail on the (stream_name, stream_position) key, and nothing is written.
// Rows go in stream-name order, so two statements touching the same streams wait for each other
// in one order and never deadlock.
const APPEND_MANY_SQL = `
WITH req AS (
  SELECT r.ord::int AS request, r.value->>'stream' AS stream_name, r.value->>'kind' AS kind,
         (r.value->>'expected')::int AS expected, r.value->'events' AS events
  FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS r(value, ord)
), head AS (
  SELECT req.*, (SELECT max(e.stream_position) FROM events e WHERE e.stream_name = req.stream_name) AS revision FROM req
), allowed AS (
  SELECT * FROM head
  WHERE CASE kind WHEN 'any' THEN true WHEN 'no_stream' THEN revision IS NULL ELSE revision = expected END
), inserted AS (
  INSERT INTO events (stream_name, stream_position, event_id, type, data, metadata)
  SELECT a.stream_name, coalesce(a.revision, -1) + e.ord::int,
         (e.value->>'id')::uuid, e.value->>'type', e.value->'data', e.value->'metadata'
  FROM allowed a, jsonb_array_elements(a.events) WITH ORDINALITY AS e(value, ord)
  ORDER BY a.stream_name, e.ord
  RETURNING stream_name, stream_position, global_position, transaction_id
), last AS (
  SELECT DISTINCT ON (stream_name) stream_name, stream_position, global_position, transaction_id
  FROM inserted ORDER BY stream_name, stream_position DESC
)
SELECT h.request, h.revision AS actual, l.stream_position AS revision,
       l.transaction_id::text AS commit, l.global_position::text AS prepare
FROM head h LEFT JOIN last l ON l.stream_name = h.stream_name
ORDER BY h.request`;

/** More in one statement would make one slow append hold many callers. */
const MAX_APPENDS_PER_STATEMENT = 64;
/** A bulk writer's appends (appendToStreams) are its own: fewer, larger statements serve it best. */
const MAX_BULK_APPENDS_PER_STATEMENT = 1000;

interface PendingAppend {
  readonly streamName: string;
  readonly events: readonly NewEvent[];
  readonly expected: ExpectedRevision;
  /** The events as JSON, made when appended; null for a bulk append's, made with the statement's. */
  readonly payload: string | null;
  readonly resolve: (result: AppendResult) => void;
  readonly reject: (error: unknown) => void;
}

interface MultiAppendRow {
  request: number;
  actual: number | null;
  revision: number | null;
  commit: string | null;
  prepare: string | null;
}

const eventJson = (e: NewEvent) => ({ id: e.id, type: e.type, data: e.data === undefined ? null : e.data, metadata: e.metadata });

function appendPayload(events: readonly NewEvent[]): string {
  return JSON.stringify(events.map(eventJson));
}

function multiPayload(requests: readonly PendingAppend[]): string {
  const expectation = (r: PendingAppend) =>
    typeof r.expected === 'number' ? { kind: 'exact', expected: r.expected } : { kind: r.expected, expected: null };
  // A bulk append's events are serialised here, all in one pass.
  if (requests.every((r) => r.payload === null)) {
    return JSON.stringify(requests.map((r) => ({ stream: r.streamName, ...expectation(r), events: r.events.map(eventJson) })));
  }
  const parts = requests.map((r) => {
    const { kind, expected } = expectation(r);
    // The events are already JSON: spliced in rather than parsed and serialised again.
    return `{"stream":${JSON.stringify(r.streamName)},"kind":"${kind}","expected":${expected},"events":${r.payload ?? appendPayload(r.events)}}`;
  });
  return `[${parts.join(',')}]`;
}

// ORDER BY names the table's columns explicitly: an unqualified name would bind to an output
// column of the same name first, and a text cast of it would sort '10' before '9'.
const READ_ALL_SQL = `SELECT ${COLUMNS} FROM events
WHERE ${VISIBLE} AND (transaction_id, global_position) > ($1::xid8, $2::bigint)
ORDER BY events.transaction_id, events.global_position LIMIT $3`;

const HEAD_SQL = `SELECT transaction_id::text AS commit, global_position::text AS prepare FROM events
WHERE ${VISIBLE} ORDER BY events.transaction_id DESC, events.global_position DESC LIMIT 1`;

interface EventRow {
  prepare: string;
  commit: string;
  stream_name: string;
  stream_position: number;
  event_id: string;
  type: string;
  data: unknown;
  metadata: RecordedEvent['metadata'];
  recorded_at: Date;
}

interface AppendRow {
  actual: number | null;
  revision: number | null;
  commit: string | null;
  prepare: string | null;
}

export class PostgresEventStore implements EventStore {
  private readonly channel: string;
  private readonly pollIntervalMs: number;
  private readonly notifications: AppendNotifications;
  private readonly subscriptions = new Set<PollingSubscription>();
  private announcing: Promise<void> | null = null;
  private pendingAppends: PendingAppend[] = [];
  private announceAgain = false;
  private closed = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly options: PostgresEventStoreOptions = {},
  ) {
    this.channel = options.channel ?? DEFAULT_CHANNEL;
    this.pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
    this.notifications = new AppendNotifications(pool.options, this.channel);
  }

  /**
   * Appends asked for in the same event-loop turn, to different streams, go out as ONE statement
   * (one round trip and one commit for all: group commit), each still with its own expected
   * revision and its own outcome. A stream that conflicts, or a batch that meets a concurrent
   * writer, falls back to appending alone, so the semantics are exactly those of one append.
   */
  async appendToStream(streamName: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    checkAppend(streamName, events, expected);
    return new Promise((resolve, reject) => {
      const request: PendingAppend = { streamName, events, expected, payload: appendPayload(events), resolve, reject };
      if (this.pendingAppends.push(request) > 1) return;
      setImmediate(() => {
        const batch = this.pendingAppends;
        this.pendingAppends = [];
        // Settling a promise twice is a no-op: a bug in the flush fails what it left open instead of hanging it.
        this.flushAppends(batch).catch((error: unknown) => batch.forEach((r) => r.reject(error)));
      });
    });
  }

  /**
   * appendToStream for many streams at once, for a bulk writer: statements of up to
   * MAX_BULK_APPENDS_PER_STATEMENT appends, with exactly the per-append checks, positions,
   * outcomes and NOTIFY of group commit.
   */
  async appendToStreams(appends: readonly StreamAppend[]): Promise<Array<PromiseSettledResult<AppendResult>>> {
    const requests: PendingAppend[] = [];
    const outcomes = appends.map(
      ({ streamName, events, expected }) =>
        new Promise<AppendResult>((resolve, reject) => {
          checkAppend(streamName, events, expected); // a throw here rejects this append only
          requests.push({ streamName, events, expected, payload: null, resolve, reject });
        }),
    );
    const settled = Promise.allSettled(outcomes); // handles a refused append's rejection at once
    await this.flushAppends(requests, MAX_BULK_APPENDS_PER_STATEMENT).catch((error: unknown) => requests.forEach((r) => r.reject(error)));
    return settled;
  }

  private async flushAppends(batch: readonly PendingAppend[], perStatement = MAX_APPENDS_PER_STATEMENT): Promise<void> {
    // The same stream twice would compute one head for both: the later ones go alone, in order.
    const seen = new Set<string>();
    const together: PendingAppend[] = [];
    const repeated: PendingAppend[] = [];
    for (const r of batch) {
      if (seen.has(r.streamName)) repeated.push(r);
      else {
        seen.add(r.streamName);
        together.push(r);
      }
    }
    const statements: PendingAppend[][] = [];
    for (let i = 0; i < together.length; i += perStatement) statements.push(together.slice(i, i + perStatement));
    // Every stream is in one statement only, so the statements cannot conflict: they run side by side.
    const unsettled = await Promise.all(statements.map((requests) => (requests.length === 1 ? requests : this.appendTogether(requests))));
    // A stream's first append (unsettled) before its repeats: each stream's appends stay in order.
    const alone = [...unsettled.flat(), ...repeated];
    const settle = (r: PendingAppend, result: Promise<AppendResult>) => result.then(r.resolve, r.reject);
    const byStream = new Map<string, PendingAppend[]>();
    for (const r of alone) byStream.set(r.streamName, [...(byStream.get(r.streamName) ?? []), r]);
    await Promise.all(
      [...byStream.values()].map(async (requests) => {
        for (const r of requests) {
          await settle(r, (async () => this.appendAlone(r.streamName, r.events, r.expected, r.payload ?? appendPayload(r.events)))());
        }
      }),
    );
  }

  /** One statement for appends to distinct streams; answers those it could not settle, to go alone. */
  private async appendTogether(together: readonly PendingAppend[]): Promise<PendingAppend[]> {
    let rows: MultiAppendRow[];
    try {
      ({ rows } = await this.pool.query<MultiAppendRow>({ name: 'event-store-append-many', text: APPEND_MANY_SQL, values: [multiPayload(together)] }));
    } catch {
      // Nothing was written: a concurrent writer, a retried event id, or one append's data the
      // server refuses aborts the whole statement. Each append is made alone and gets its own
      // outcome there, so no append fails for another's sake.
      return [...together];
    }
    const alone: PendingAppend[] = [];
    let committed = false;
    const byRequest = new Map(rows.map((row) => [row.request, row]));
    for (const [i, r] of together.entries()) {
      const row = byRequest.get(i + 1);
      if (row && row.revision !== null && row.commit !== null && row.prepare !== null) {
        committed = true;
        r.resolve({ nextExpectedRevision: row.revision, position: { commit: BigInt(row.commit), prepare: BigInt(row.prepare) } });
      } else {
        // Not where it expected: alone, it finds out whether this is a retry or a conflict.
        alone.push(r);
      }
    }
    if (committed) this.announce();
    return alone;
  }

  private async appendAlone(streamName: string, events: readonly NewEvent[], expected: ExpectedRevision, payload: string): Promise<AppendResult> {
    const values = [streamName, payload, typeof expected === 'number' ? 'exact' : expected, typeof expected === 'number' ? expected : null];
    for (let attempt = 1; ; attempt++) {
      let row: AppendRow | undefined;
      try {
        ({ rows: [row] } = await this.pool.query<AppendRow>({ name: 'event-store-append', text: APPEND_SQL, values }));
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
        if (error.constraint === EVENT_ID_KEY) {
          const earlier = await this.idempotentResult(streamName, events, expected);
          if (earlier) return earlier;
          throw new Error(`an event id of this append to ${streamName} is already recorded elsewhere`, { cause: error });
        }
        if (error.constraint !== STREAM_POSITION_KEY) throw error;
        // A concurrent append took the revision we computed. 'any' only asks for some place at the end: try again.
        if (expected === 'any' && attempt < MAX_ANY_ATTEMPTS) continue;
        const earlier = await this.idempotentResult(streamName, events, expected);
        if (earlier) return earlier;
        throw new WrongExpectedVersion(streamName, expected, await this.currentRevision(streamName));
      }
      if (!row) throw new Error('append returned no row');
      if (row.revision === null || row.commit === null || row.prepare === null) {
        const earlier = await this.idempotentResult(streamName, events, expected);
        if (earlier) return earlier;
        throw new WrongExpectedVersion(streamName, expected, row.actual ?? 'no_stream');
      }
      this.announce();
      return { nextExpectedRevision: row.revision, position: { commit: BigInt(row.commit), prepare: BigInt(row.prepare) } };
    }
  }

  async readStream(streamName: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const backwards = options.direction === 'backwards';
    const from = options.fromRevision ?? (backwards ? 2 ** 31 - 1 : 0);
    const { rows } = await this.pool.query<EventRow>(
      `SELECT ${COLUMNS} FROM events WHERE stream_name = $1 AND stream_position ${backwards ? '<=' : '>='} $2
       ORDER BY stream_position ${backwards ? 'DESC' : 'ASC'} LIMIT $3`,
      [streamName, from, options.maxCount ?? null],
    );
    return rows.map(toRecordedEvent);
  }

  /** One round trip for all the streams: each round trip is a large share of a command's cost. */
  async readStreams(requests: readonly StreamRead[]): Promise<RecordedEvent[][]> {
    if (requests.length === 0) return [];
    if (requests.length === 1) return [await this.readStream(requests[0]!.streamName, { fromRevision: requests[0]!.fromRevision ?? 0 })];
    // LATERAL: one index probe per stream, whatever the planner thinks the arrays hold (a plain
    // join was planned as a hash join over a sequential scan of the whole log).
    const { rows } = await this.pool.query<EventRow & { request: number }>({
      name: 'event-store-read-streams',
      text: `SELECT r.request::int AS request, e.global_position::text AS prepare, e.transaction_id::text AS commit,
         e.stream_name, e.stream_position, e.event_id::text AS event_id, e.type, e.data, e.metadata, e.recorded_at
       FROM unnest($1::text[], $2::int[]) WITH ORDINALITY AS r(stream_name, from_revision, request)
       CROSS JOIN LATERAL (
         SELECT * FROM events WHERE events.stream_name = r.stream_name AND events.stream_position >= r.from_revision
         ORDER BY events.stream_position
       ) e
       ORDER BY r.request, e.stream_position`,
      values: [requests.map((r) => r.streamName), requests.map((r) => r.fromRevision ?? 0)],
    });
    const result: RecordedEvent[][] = requests.map(() => []);
    for (const row of rows) result[row.request - 1]!.push(toRecordedEvent(row));
    return result;
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const after = options.after ?? START;
    const { rows } = await this.pool.query<EventRow>({
      name: 'event-store-read-all',
      text: READ_ALL_SQL,
      values: [after.commit.toString(), after.prepare.toString(), options.maxCount ?? null],
    });
    return rows.map(toRecordedEvent);
  }

  subscribeToAll(options: SubscribeOptions): Subscription {
    if (this.closed) throw new Error('the event store is closed');
    const subscription = new PollingSubscription(this, this.notifications, options, this.pollIntervalMs, () => {
      this.subscriptions.delete(subscription);
    });
    this.subscriptions.add(subscription);
    return subscription;
  }

  async headPosition(): Promise<Position> {
    const { rows } = await this.pool.query<{ commit: string; prepare: string }>(HEAD_SQL);
    const row = rows[0];
    return row ? { commit: BigInt(row.commit), prepare: BigInt(row.prepare) } : START;
  }

  /** The row of event_store_identity (migration 012), beside the events table; the first caller writes it. */
  async identity(): Promise<string> {
    const read = async () => (await this.pool.query<{ id: string }>('SELECT id::text AS id FROM event_store_identity')).rows[0]?.id;
    let id = await read();
    if (!id) {
      await this.pool.query('INSERT INTO event_store_identity (id) VALUES ($1) ON CONFLICT DO NOTHING', [randomUUID()]);
      id = await read(); // ours, or that of a process that wrote it first
    }
    if (!id) throw new Error('event_store_identity holds no row');
    return `postgresql:${id}`;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.subscriptions].map((s) => s.stop()));
    await this.announcing;
    await this.notifications.close();
    if (this.options.ownsPool) await this.pool.end();
  }

  /**
   * Tells subscribers that an append committed: this process's at once, other processes by a
   * NOTIFY sent after the commit. Appends that commit while a NOTIFY is in flight share one more
   * sent after it, so every commit is followed by a NOTIFY that started after it, and there is at
   * most one in flight. If the process dies in between, the subscribers' polling finds the events.
   */
  private announce(): void {
    this.notifications.changed();
    if (this.announcing) {
      this.announceAgain = true;
      return;
    }
    this.announcing = (async () => {
      do {
        this.announceAgain = false;
        try {
          await this.pool.query({ name: 'event-store-notify', text: "SELECT pg_notify($1, '')", values: [this.channel] });
        } catch {
          // The append has committed; polling covers a lost notification.
        }
      } while (this.announceAgain && !this.closed);
      this.announcing = null;
    })();
  }

  private async currentRevision(streamName: string): Promise<number | 'no_stream'> {
    const { rows } = await this.pool.query<{ revision: number | null }>(
      'SELECT max(stream_position) AS revision FROM events WHERE stream_name = $1',
      [streamName],
    );
    return rows[0]?.revision ?? 'no_stream';
  }

  /**
   * A retried append (the first one committed but its answer was lost) finds its events already
   * stored right after the revision it expected: answer as the first time, like EventStoreDB does.
   */
  private async idempotentResult(
    streamName: string,
    events: readonly NewEvent[],
    expected: ExpectedRevision,
  ): Promise<AppendResult | null> {
    const { rows } = await this.pool.query<{ event_id: string; stream_name: string; stream_position: number; commit: string; prepare: string }>(
      `SELECT event_id::text AS event_id, stream_name, stream_position, transaction_id::text AS commit, global_position::text AS prepare
       FROM events WHERE event_id = ANY($1::uuid[]) ORDER BY stream_name, stream_position`,
      [events.map((e) => e.id)],
    );
    if (rows.length !== events.length) return null;
    const first = rows[0]!.stream_position;
    if (expected === 'no_stream' && first !== 0) return null;
    if (typeof expected === 'number' && first !== expected + 1) return null;
    const sameAppend = rows.every(
      (row, i) => row.stream_name === streamName && row.event_id === events[i]!.id.toLowerCase() && row.stream_position === first + i,
    );
    if (!sameAppend) return null;
    const last = rows.at(-1)!;
    return { nextExpectedRevision: last.stream_position, position: { commit: BigInt(last.commit), prepare: BigInt(last.prepare) } };
  }
}

/** A store over its own pool, ended on close(). Run migrateToLatest on the database first. */
export function createPostgresEventStore(
  connectionString: string,
  options: Omit<PostgresEventStoreOptions, 'ownsPool'> & { readonly maxConnections?: number } = {},
): PostgresEventStore {
  return new PostgresEventStore(createPgPool(connectionString, options.maxConnections ?? 10), { ...options, ownsPool: true });
}

function toRecordedEvent(row: EventRow): RecordedEvent {
  return {
    id: row.event_id,
    type: row.type,
    data: row.data,
    metadata: row.metadata,
    streamName: row.stream_name,
    revision: row.stream_position,
    position: { commit: BigInt(row.commit), prepare: BigInt(row.prepare) },
    recordedAt: row.recorded_at,
  };
}

function checkAppend(streamName: string, events: readonly NewEvent[], expected: ExpectedRevision): void {
  if (!streamName) throw new RangeError('stream name must not be empty');
  if (events.length === 0) throw new RangeError(`nothing to append to ${streamName}`);
  if (typeof expected === 'number' && !(Number.isInteger(expected) && expected >= 0)) {
    throw new RangeError(`expected revision must be 'no_stream', 'any' or an integer >= 0 (got ${expected})`);
  }
}

function isUniqueViolation(error: unknown): error is pg.DatabaseError {
  return error instanceof pg.DatabaseError && error.code === UNIQUE_VIOLATION;
}
