// The audit log's costs (issue 26):
//   1. the notary: how fast it makes leaves of a backlog, its CPU (Node and PostgreSQL) per event
//      set against a pass create's, and whether it keeps up with a live append rate (lag over time);
//   2. `guestpass audit verify` of a synthetic export (events per second, peak memory of the process);
//   3. inclusion proofs read from a tree of 1,000,000 leaves (p50 / p99 latency).
//
//   npx tsx bench/audit.ts                    # full: 20,000-event backlog, 1,000,000-event export and tree
//   npx tsx bench/audit.ts --smoke            # seconds: small sizes, for CI
//   npx tsx bench/audit.ts --events N --verify-events N --tree-leaves N --live-seconds S --rate R
//
// Runs against DATABASE_URL (a scratch database is created and dropped) or an embedded server.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createWriteStream, readFileSync, readdirSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { once } from 'node:events';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CompactSign, exportJWK, generateKeyPair } from 'jose';
import { createKnex, type Knex } from '../shared/db/knex.js';
import { migrateToLatest } from '../shared/db/migrate.js';
import { createEventStore } from '../shared/event-store/create-event-store.js';
import { eventSchemas } from '../shared/domain/event-schemas.js';
import type { EventStore, NewEvent } from '../shared/event-store/event-store.js';
import { AuditNotary } from '../projections/audit-notary.js';
import { readTreeState } from '../shared/audit/postgres-audit-tree.js';
import { eventLeafHash, type CanonicalEvent } from '../shared/audit/audit-leaf.js';
import { CompactRange, type StoredNode } from '../shared/audit/compact-range.js';
import { leafHash, toHex } from '../shared/audit/merkle-hash.js';
import { inclusionProof } from '../shared/audit/merkle-proofs.js';
import { PostgresNodeStore } from '../shared/audit/postgres-audit-tree.js';
import { headPayload, TREE_HEAD_TYP } from '../shared/audit/tree-head.js';
import { EXPORT_FORMAT, EXPORT_VERSION, exportLineText } from '../shared/audit/export-format.js';
import { integerOption } from './command-line-options.js';
import { percentile } from './percentile.js';
import { procStat, ticksToSeconds } from './oauth-bench/machine-cpu.js';
import { runThenExit } from './run-then-exit.js';
import { withServiceNodeFlags } from './service-node-flags.js';
import { freshDatabase, stopTestDatabases } from '../test/support/database.js';

withServiceNodeFlags();
const smoke = process.argv.includes('--smoke');
const BACKLOG = integerOption('events', smoke ? 1000 : 20_000);
const VERIFY_EVENTS = integerOption('verify-events', smoke ? 5000 : 1_000_000);
const TREE_LEAVES = integerOption('tree-leaves', smoke ? 5000 : 1_000_000);
const LIVE_SECONDS = integerOption('live-seconds', smoke ? 1 : 10);
const LIVE_RATE = integerOption('rate', 1500);
const PROOFS = integerOption('proofs', smoke ? 200 : 2000);
/** From docs/capacity.md: a create through HTTP costs 1.6-1.7 ms of service CPU and 0.8-0.9 ms of PostgreSQL CPU. */
const CREATE_CPU_MS = 2.5;
/** A create without delivery appends one event (PassCreated); with email and SMS, two more. */
const EVENTS_PER_CREATE = 1;
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** A PassCreated of the size the service writes (sealed guest data about 700 characters). */
function passCreated(i: number): NewEvent {
  const b64 = (n: number) => Buffer.alloc(n, i % 251).toString('base64url');
  return {
    id: randomUUID(),
    type: 'PassCreated',
    data: {
      passId: i + 1,
      publicId: `gst_${(i + 1).toString(16).padStart(32, "0")}`,
      orgId: 1 + (i % 10),
      facilityId: 1,
      createdBy: 1,
      batchId: randomUUID(),
      batchSize: 1,
      arrivalDate: '2026-12-01',
      arrivalTime: null,
      validFrom: '2026-12-01T00:00:00.000Z',
      validUntil: '2026-12-02T00:00:00.000Z',
      qrHash: 'ab'.repeat(32),
      guest: { keyId: randomUUID(), iv: b64(12), ciphertext: b64(520), tag: b64(16) },
      passLinkHash: 'cd'.repeat(32),
    },
    metadata: { correlationId: randomUUID(), causationId: null, actor: { kind: 'apiKey', id: 'key1', userId: 1 }, occurredAt: new Date().toISOString(), schemaVersion: 2 },
  };
}

async function append(store: EventStore, from: number, count: number): Promise<void> {
  const chunks: Promise<unknown>[] = [];
  for (let i = from; i < from + count; i += 50) {
    const events = Array.from({ length: Math.min(50, from + count - i) }, (_, j) => passCreated(i + j));
    chunks.push(store.appendToStream(`guest-invites-bench-${i}`, events, 'no_stream'));
    if (chunks.length >= 8) await Promise.all(chunks.splice(0));
  }
  await Promise.all(chunks);
}

/** CPU seconds of the server processes of `database` now running (the notary's connections while it alone works there). */
function databaseBackendsCpu(database: string): number | null {
  let ticks = 0;
  let found = false;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(database)) continue;
      const fields = procStat(pid);
      ticks += Number(fields[11]) + Number(fields[12]);
      found = true;
    } catch {
      // ended meanwhile
    }
  }
  return found ? ticksToSeconds(ticks) : null;
}

async function waitForTree(knex: Knex, size: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await readTreeState(knex)).treeSize < size) {
    if (Date.now() > deadline) throw new Error(`the notary did not reach ${size} leaves in ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function notaryBench(url: string): Promise<void> {
  const database = new URL(url).pathname.slice(1);
  const knex = createKnex(url, { max: 4 });
  await migrateToLatest(knex);
  const store = createEventStore({ databaseUrl: url, eventStoreUrl: null, schemas: eventSchemas });
  try {
    await append(store, 0, BACKLOG);
    const kek = Buffer.alloc(32, 3);
    // Backlog: everything there before the notary starts.
    const cpu0 = process.cpuUsage();
    const pg0 = databaseBackendsCpu(database);
    const started = performance.now();
    const notary = new AuditNotary({ store, knex, kek, sampleEveryMs: 0, headIntervalMs: 10_000 });
    await notary.start();
    await waitForTree(knex, BACKLOG, 600_000);
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const pg1 = databaseBackendsCpu(database);
    const nodeMs = (cpu.user + cpu.system) / 1000 / BACKLOG;
    const pgMs = pg0 !== null && pg1 !== null ? ((pg1 - pg0) * 1000) / BACKLOG : null;
    const perCreate = (nodeMs + (pgMs ?? 0)) * EVENTS_PER_CREATE;
    console.log(`notary backlog: ${BACKLOG} events in ${seconds.toFixed(1)} s = ${Math.round(BACKLOG / seconds)} events/s`);
    console.log(
      `  CPU per event: Node ${(nodeMs * 1000).toFixed(0)} µs, PostgreSQL ${pgMs === null ? 'n/a' : `${(pgMs * 1000).toFixed(0)} µs`}; ` +
        `per create (${EVENTS_PER_CREATE} event) ${(perCreate * 100 / CREATE_CPU_MS).toFixed(1)} % of a create's ${CREATE_CPU_MS} ms (target <= 10 %)`,
    );
    // Live: appends at a fixed rate while the notary follows; the lag must not grow.
    const lags: number[] = [];
    const lagTimes: number[] = [];
    let appended = BACKLOG;
    const liveStart = performance.now();
    while (performance.now() - liveStart < LIVE_SECONDS * 1000) {
      const due = Math.floor(((performance.now() - liveStart) / 1000) * LIVE_RATE) + BACKLOG;
      if (due > appended) {
        await append(store, appended, due - appended);
        appended = due;
      }
      lags.push(appended - (await readTreeState(knex)).treeSize);
      lagTimes.push((performance.now() - liveStart) / 1000);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await waitForTree(knex, appended, 60_000);
    const third = Math.max(1, Math.floor(lags.length / 3));
    // The trend: least-squares slope of the lag over the run, in events a second (0 when it keeps up).
    const xs = lagTimes;
    const mx = xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    const my = lags.reduce((a, b) => a + b, 0) / Math.max(1, lags.length);
    const sxx = xs.reduce((a, x) => a + (x - mx) ** 2, 0);
    const slope = sxx > 0 ? xs.reduce((a, x, i) => a + (x - mx) * (lags[i]! - my), 0) / sxx : 0;
    const avg = (xs: number[]) => Math.round(xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length));
    console.log(
      `notary live at ${LIVE_RATE} events/s for ${LIVE_SECONDS} s: lag (events) first third avg ${avg(lags.slice(0, third))}, last third avg ${avg(lags.slice(-third))}, max ${Math.max(...lags)}, trend ${slope >= 0 ? '+' : ''}${Math.round(slope)} events/s (${((slope * 100) / LIVE_RATE).toFixed(1)} % of the rate); caught up after`,
    );
    await notary.stop();
  } finally {
    await store.close();
    await knex.destroy();
  }
}

/** A synthetic operator export of `count` events with a head every 10,000 leaves, and its key set. */
async function writeExport(dir: string, count: number): Promise<{ file: string; keys: string }> {
  const { publicKey, privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
  const jwk = { ...(await exportJWK(publicKey)), kid: 'bench', alg: 'EdDSA', use: 'sig' };
  const keys = path.join(dir, 'keys.json');
  await writeFile(keys, JSON.stringify({ keys: [jwk] }));
  const file = path.join(dir, 'export.ndjson');
  const out = createWriteStream(file, { highWaterMark: 1 << 20 });
  const write = async (line: unknown) => {
    if (!out.write(JSON.stringify(line) + '\n')) await once(out, 'drain');
  };
  await write({ kind: 'header', format: EXPORT_FORMAT, version: EXPORT_VERSION, from_size: 0, to_size: count, exported_at: new Date().toISOString() });
  const range = new CompactRange();
  let head = 0;
  let at = 1_700_000_000_000;
  for (let i = 0; i < count; i++) {
    const e = passCreated(i);
    const event: CanonicalEvent = { position: `${1000 + i}/${i + 1}`, stream: `guest-invites-${i}`, revision: 0, id: e.id, type: e.type, data: e.data, metadata: e.metadata, recorded_at: new Date(at + i).toISOString() };
    const hash = eventLeafHash(event);
    range.append(hash);
    if (!out.write(exportLineText({ kind: 'entry', leaf: { index: i, event_id: e.id, position: event.position, leaf_hash: toHex(hash) }, event }) + '\n')) await once(out, 'drain');
    if ((i + 1) % 10_000 === 0 || i === count - 1) {
      const fields = { tree_size: i + 1, root_hash: toHex(range.root()), timestamp: at + i };
      const signature = await new CompactSign(new TextEncoder().encode(headPayload(fields))).setProtectedHeader({ alg: 'EdDSA', kid: 'bench', typ: TREE_HEAD_TYP }).sign(privateKey);
      await write({ kind: 'head', head: ++head, ...fields, signature });
    }
  }
  await write({ kind: 'end', entries: count });
  out.end();
  await once(out, 'finish');
  return { file, keys };
}

async function verifyBench(): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'guestpass-audit-bench-'));
  try {
    const { file, keys } = await writeExport(dir, VERIFY_EVENTS);
    const child = spawn(process.execPath, ['--max-semi-space-size=64', '--import', 'tsx', path.join(ROOT, 'bench', 'audit-verify-child.ts'), file, keys], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const [code] = (await once(child, 'exit')) as [number | null];
    const result = JSON.parse(out.trim().split('\n').at(-1) || '{}') as { verified?: boolean; events?: number; seconds: number; floorSeconds: number; baselineMb: number; peakMb: number };
    if (code !== 0 || !result.verified) {
      process.exitCode = 1;
      console.log(`audit verify FAILED (exit ${code}): ${out.trim()}`);
      return;
    }
    console.log(
      `audit verify: ${result.events} events in ${result.seconds.toFixed(1)} s = ${Math.round(VERIFY_EVENTS / result.seconds)} events/s (target >= 100,000); ` +
        `floor (the file read and each line SHA-256'd, nothing else) ${Math.round(VERIFY_EVENTS / result.floorSeconds)} lines/s; ` +
        `resident memory ${result.baselineMb.toFixed(0)} MB before (the TypeScript loader), peak ${result.peakMb.toFixed(0)} MB while verifying (target < 200 MB)`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function proofBench(url: string): Promise<void> {
  const knex = createKnex(url, { max: 2 });
  await migrateToLatest(knex);
  try {
    const range = new CompactRange();
    let nodes: StoredNode[] = [];
    const flush = async () => {
      if (nodes.length === 0) return;
      await knex.raw('INSERT INTO audit_tree_nodes (level, idx, hash) SELECT * FROM unnest(?::smallint[], ?::bigint[], ?::bytea[])', [
        nodes.map((n) => n.level),
        nodes.map((n) => String(n.index)),
        nodes.map((n) => n.hash),
      ] as unknown as Knex.RawBinding[]);
      nodes = [];
    };
    const filled = performance.now();
    for (let i = 0; i < TREE_LEAVES; i++) {
      nodes.push(...range.append(leafHash(Buffer.from(`leaf ${i}`))));
      if (nodes.length >= 20_000) await flush();
    }
    await flush();
    await knex.raw('ANALYZE audit_tree_nodes');
    const store = new PostgresNodeStore(knex);
    // Each proof alternates with the floor, a `SELECT 1` on the same pool: the same round trip and
    // scheduling at the same moment, so what the proof adds shows apart from the machine's load.
    const times: number[] = [];
    const floor: number[] = [];
    for (let i = 0; i < PROOFS + 50; i++) {
      const leaf = Math.floor(Math.random() * TREE_LEAVES);
      const t0 = performance.now();
      const proof = await inclusionProof(store, leaf, TREE_LEAVES);
      const ms = performance.now() - t0;
      const t1 = performance.now();
      await knex.raw('SELECT 1');
      const floorMs = performance.now() - t1;
      if (i >= 50) {
        // the first few warm the connection and the plan
        times.push(ms);
        floor.push(floorMs);
      }
      if (proof.length === 0 && TREE_LEAVES > 1) throw new Error('empty proof');
    }
    times.sort((a, b) => a - b);
    floor.sort((a, b) => a - b);
    console.log(
      `inclusion proof at ${TREE_LEAVES.toLocaleString('en')} leaves (tree filled in ${((performance.now() - filled) / 1000).toFixed(0)} s): ` +
        `p50 ${percentile(times, 50).toFixed(2)} ms, p99 ${percentile(times, 99).toFixed(2)} ms over ${PROOFS} proofs (target p99 < 10 ms); ` +
        `floor (SELECT 1 between them) p50 ${percentile(floor, 50).toFixed(2)} ms, p99 ${percentile(floor, 99).toFixed(2)} ms`,
    );
  } finally {
    await knex.destroy();
  }
}

runThenExit(async () => {
  console.log(`audit bench${smoke ? ' (smoke)' : ''}: load average ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores (figures on a busy machine are noisy)`);
  await notaryBench(await freshDatabase('audit_bench_notary'));
  await verifyBench();
  await proofBench(await freshDatabase('audit_bench_proofs'));
  await stopTestDatabases();
});
