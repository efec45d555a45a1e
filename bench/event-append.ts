// Appends through the event store port versus a bare INSERT of the same rows into an identical
// table, side by side in one run: throughput and latency at a fixed concurrency.
//
//   npx tsx bench/event-append.ts                 # embedded PostgreSQL in a temporary folder
//   DATABASE_URL=postgres://... npx tsx bench/event-append.ts   # a server of yours (a scratch database is created and dropped)
//
// BENCH_APPENDS (default 3000 per run) and BENCH_CONCURRENCY (default 8) tune it; every run
// also stops after BENCH_RUN_SECONDS (default 8) so the whole bench stays under a minute.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createKnex } from '../shared/db/knex.js';
import { migrateToLatest } from '../shared/db/migrate.js';
import type { ExpectedRevision, NewEvent } from '../shared/event-store/event-store.js';
import { PostgresEventStore } from '../shared/event-store/postgres-event-store.js';
import { percentile } from './percentile.js';
import { databaseKind, freshDatabase, stopTestDatabases } from '../test/support/database.js';

const APPENDS = positiveInt('BENCH_APPENDS', 3000);
const CONCURRENCY = positiveInt('BENCH_CONCURRENCY', 8);
const RUN_SECONDS = positiveInt('BENCH_RUN_SECONDS', 8);
const WARMUP = 200;

function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer`);
  return n;
}

function event(i: number): NewEvent {
  return {
    id: randomUUID(),
    type: 'PassRevoked',
    data: { passId: i, publicId: `P${i.toString().padStart(8, '0')}`, orgId: 7, facilityId: 3 },
    metadata: {
      correlationId: randomUUID(),
      causationId: null,
      actor: { kind: 'user', id: 42 },
      occurredAt: new Date().toISOString(),
      schemaVersion: 1,
    },
  };
}

/** One append: gets its index and the worker's number, returns when durable. */
type Append = (i: number, worker: number) => Promise<void>;

interface RunResult {
  readonly count: number;
  readonly seconds: number;
  readonly latenciesMs: number[];
}

async function run(append: Append, total: number, seconds: number): Promise<RunResult> {
  let next = 0;
  const latenciesMs: number[] = [];
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, worker) => {
      while (next < total && performance.now() < deadline) {
        const i = next++;
        const t0 = performance.now();
        await append(i, worker);
        latenciesMs.push(performance.now() - t0);
      }
    }),
  );
  return { count: latenciesMs.length, seconds: (performance.now() - started) / 1000, latenciesMs };
}

function summarise(label: string, method: string, r: RunResult) {
  const sorted = [...r.latenciesMs].sort((a, b) => a - b);
  return {
    label,
    method,
    appends: r.count,
    perSecond: r.count / r.seconds,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
  };
}

async function main(): Promise<void> {
  // A scratch database on DATABASE_URL's server or an embedded one, so the bench never touches real tables.
  const url = await freshDatabase('bench_append');
  const pools: pg.Pool[] = [];
  try {
    const knex = createKnex(url);
    await migrateToLatest(knex);
    // The same table (columns, defaults, keys, index) with its own sequence.
    await knex.raw(`CREATE TABLE events_bare (LIKE events INCLUDING ALL);
      CREATE SEQUENCE events_bare_seq OWNED BY events_bare.global_position;
      ALTER TABLE events_bare ALTER COLUMN global_position SET DEFAULT nextval('events_bare_seq')`);
    const { rows } = await knex.raw<{ rows: Array<{ version: string; fsync: string; synchronous_commit: string }> }>(
      `SELECT current_setting('server_version') AS version, current_setting('fsync') AS fsync,
              current_setting('synchronous_commit') AS synchronous_commit`,
    );
    await knex.destroy();

    const portPool = new pg.Pool({ connectionString: url, max: CONCURRENCY });
    const barePool = new pg.Pool({ connectionString: url, max: CONCURRENCY });
    pools.push(portPool, barePool);
    for (const pool of pools) pool.on('error', () => undefined); // idle clients cut off when the scratch database is dropped
    const store = new PostgresEventStore(portPool);

    const bareInsert = (stream: string, position: number, e: NewEvent) =>
      barePool.query({
        name: 'bare-insert',
        text: `INSERT INTO events_bare (stream_name, stream_position, event_id, type, data, metadata) VALUES ($1, $2, $3, $4, $5, $6)`,
        values: [stream, position, e.id, e.type, JSON.stringify(e.data), JSON.stringify(e.metadata)],
      });

    // Scenario 1: every append creates a stream (expected 'no_stream').
    const newStreamPort: Append = async (i) => {
      await store.appendToStream(`port-${i}-${randomUUID()}`, [event(i)], 'no_stream');
    };
    const newStreamBare: Append = async (i) => {
      await bareInsert(`bare-${i}-${randomUUID()}`, 0, event(i));
    };

    // Scenario 2: each worker appends to its own long stream with the exact expected revision
    // (one stream per worker, since concurrent writers of one stream would measure conflicts).
    const makeOneStream = (prefix: string) => {
      const portRevisions = new Map<number, ExpectedRevision>();
      const bareRevisions = new Map<number, number>();
      const stream = (w: number) => `${prefix}-${w}`;
      return {
        port: (async (i, w) => {
          const expected = portRevisions.get(w) ?? 'no_stream';
          const r = await store.appendToStream(stream(w), [event(i)], expected);
          portRevisions.set(w, r.nextExpectedRevision);
        }) satisfies Append,
        bare: (async (i, w) => {
          const position = (bareRevisions.get(w) ?? -1) + 1;
          await bareInsert(stream(w), position, event(i));
          bareRevisions.set(w, position);
        }) satisfies Append,
      };
    };

    const warmup = makeOneStream(`warm-${randomUUID()}`);
    await run(newStreamPort, WARMUP, 5);
    await run(newStreamBare, WARMUP, 5);
    await run(warmup.port, WARMUP, 5);
    await run(warmup.bare, WARMUP, 5);

    const one = makeOneStream(`one-${randomUUID()}`);
    const results = [
      summarise('new stream each', 'bare INSERT', await run(newStreamBare, APPENDS, RUN_SECONDS)),
      summarise('new stream each', 'event store', await run(newStreamPort, APPENDS, RUN_SECONDS)),
      summarise('one stream, expected revision', 'bare INSERT', await run(one.bare, APPENDS, RUN_SECONDS)),
      summarise('one stream, expected revision', 'event store', await run(one.port, APPENDS, RUN_SECONDS)),
    ];
    await store.close();

    const server = rows[0]!;
    console.log(
      `\nPostgreSQL ${server.version} (${databaseKind() === 'external' ? 'DATABASE_URL' : 'embedded'}; fsync=${server.fsync}, ` +
        `synchronous_commit=${server.synchronous_commit}), ${CONCURRENCY} concurrent appenders, one event per append\n`,
    );
    const header = ['scenario', 'method', 'appends', 'appends/s', 'p50 ms', 'p95 ms', 'p99 ms'];
    const table = results.map((r) => [
      r.label,
      r.method,
      String(r.appends),
      r.perSecond.toFixed(0),
      r.p50.toFixed(2),
      r.p95.toFixed(2),
      r.p99.toFixed(2),
    ]);
    const widths = header.map((h, c) => Math.max(h.length, ...table.map((row) => row[c]!.length)));
    const line = (cells: string[]) => cells.map((cell, c) => (c < 2 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ');
    console.log(line(header));
    console.log(widths.map((w) => '-'.repeat(w)).join('  '));
    for (const row of table) console.log(line(row));
    console.log('');
    for (let k = 0; k < results.length; k += 2) {
      const bare = results[k]!;
      const port = results[k + 1]!;
      const slower = bare.perSecond / port.perSecond;
      console.log(
        `${bare.label}: the port takes ${slower.toFixed(2)}x the time of a bare INSERT per append ` +
          `(p50 ${(port.p50 / bare.p50).toFixed(2)}x, p99 ${(port.p99 / bare.p99).toFixed(2)}x) — target within 3x: ${slower <= 3 ? 'met' : 'NOT met'}`,
      );
    }
  } finally {
    await Promise.all(pools.map((p) => p.end().catch(() => undefined)));
    await stopTestDatabases();
  }
}

await main();
