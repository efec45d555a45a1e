// Projection rebuild throughput: `npx tsx bench/projection-rebuild.ts [--events 200000] [--batch-size 2000]`.
// Seeds a PassCreated-heavy log (bulk INSERT into the events table, real sealed guest data and
// subject keys) into a fresh database of the embedded PostgreSQL (or of DATABASE_URL's server),
// rebuilds every projection through the real event store (schema validation included) and
// prints events per second, duration and peak RSS. Target: at least 20,000 events/s.
import os from 'node:os';
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createKnex, type Knex } from '../shared/db/knex.js';
import { migrateToLatest } from '../shared/db/migrate.js';
import { createEventStore } from '../shared/event-store/create-event-store.js';
import { eventSchemas } from '../shared/domain/event-schemas.js';
import { streams, type DomainEvent, type GuestDetails, type OrgScope } from '../shared/domain/events.js';
import { seal } from '../shared/crypto/sealed-box.js';
import { PostgresSubjectKeyStore } from '../shared/crypto/postgres-subject-key-store.js';
import { DataKeyRing } from '../shared/crypto/data-key-ring.js';
import { createLogger } from '../shared/logger.js';
import { DEFAULT_REBUILD_BATCH_SIZE, rebuildProjections } from '../projections/rebuild.js';
import { ProgressBar, showRebuildProgress } from '../projections/progress-bar.js';
import { databaseKind, freshDatabase, stopTestDatabases } from '../test/support/database.js';
import { integerOption } from './command-line-options.js';
import { withServiceNodeFlags } from './service-node-flags.js';
import { procStat, ticksToSeconds } from './oauth-bench/machine-cpu.js';

const TIME_LIMIT_MS = 120_000;
const ORGS = 100;
const USERS_PER_ORG = 20;
const FACILITIES_PER_ORG = 2;
/**
 * The seeded keys are wrapped as the service stores them; the rebuild unwraps each one it reads.
 * The seeding child wraps under the parent's key-encryption key, handed down in its environment.
 */
const KEK_ENV = 'BENCH_REBUILD_DATA_KEK';
const DATA_KEK = process.env[KEK_ENV] ? Buffer.from(process.env[KEK_ENV], 'hex') : randomBytes(32);
const DATA_KEYS = new DataKeyRing(DATA_KEK);

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

interface Row {
  stream_name: string;
  stream_position: number;
  event_id: string;
  type: string;
  data: unknown;
  metadata: unknown;
}

/** Builds the log in memory as rows of the events table, with per-stream positions. */
class LogBuilder {
  readonly rows: Row[] = [];
  readonly keys: Array<{ key_id: string; subject_id: string; kek_id: string; wrapped_key: string }> = [];
  private readonly revisions = new Map<string, number>();
  private clock = Date.parse('2025-03-01T08:00:00.000Z');

  add(stream: string, event: DomainEvent): void {
    const revision = (this.revisions.get(stream) ?? -1) + 1;
    this.revisions.set(stream, revision);
    this.clock += 50;
    this.rows.push({
      stream_name: stream,
      stream_position: revision,
      event_id: randomUUID(),
      type: event.type,
      data: event.data,
      metadata: {
        correlationId: randomUUID(),
        causationId: null,
        actor: { kind: 'operator' },
        occurredAt: new Date(this.clock).toISOString(),
        schemaVersion: eventSchemas.versionOf(event.type),
      },
    });
  }
}

function buildLog(target: number): { log: LogBuilder; passes: number; revoked: number } {
  const log = new LogBuilder();
  const scopes: OrgScope[] = ['org:passes:read', 'org:passes:write', 'org:facilities:read'];
  for (let org = 1; org <= ORGS; org++) {
    log.add(streams.organization(org), { type: 'OrganizationCreated', data: { orgId: org, name: `Org ${org}`, inviteAllowance: 1000 } });
    for (let f = 1; f <= FACILITIES_PER_ORG; f++) {
      const facilityId = org * 10 + f;
      log.add(streams.facility(facilityId), { type: 'FacilityAdded', data: { facilityId, orgId: org, name: `Site ${facilityId}`, description: null } });
    }
    for (let u = 0; u < USERS_PER_ORG; u++) {
      const userId = org * 1000 + u;
      log.add(streams.user(userId), {
        type: 'UserAdded',
        data: { userId, orgId: org, email: `u${userId}@example.org`, firstName: 'User', lastName: `${userId}`, passwordHash: null, inviteAllowance: null },
      });
      log.add(streams.user(userId), { type: 'RoleGranted', data: { userId, orgId: org, role: 'self_invite' } });
    }
    const keyId = `key${org}`;
    log.add(streams.apiKey(keyId), {
      type: 'ApiKeyCreated',
      data: { keyId, orgId: org, userId: org * 1000, keyHash: sha256(keyId), scopes, expiresAt: null, allowedIps: [], name: `Key of ${org}` },
    });
  }
  let passId = 0;
  let passes = 0;
  let revoked = 0;
  const live: Array<{ passId: number; orgId: number; facilityId: number; stream: string; publicId: string; qrHash: string }> = [];
  while (log.rows.length < target) {
    // About one revocation per 20 passes; otherwise a batch of 1 to 5 passes for one guest.
    if (live.length > 0 && Math.random() < 0.05) {
      const pass = live.splice(Math.floor(Math.random() * live.length), 1)[0]!;
      log.add(pass.stream, { type: 'PassRevoked', data: { passId: pass.passId, publicId: pass.publicId, orgId: pass.orgId, facilityId: pass.facilityId, qrHash: pass.qrHash } });
      revoked++;
      continue;
    }
    const orgId = 1 + Math.floor(Math.random() * ORGS);
    const createdBy = orgId * 1000 + Math.floor(Math.random() * USERS_PER_ORG);
    const facilityId = orgId * 10 + 1 + Math.floor(Math.random() * FACILITIES_PER_ORG);
    const size = Math.min(1 + Math.floor(Math.random() * 5), target - log.rows.length);
    const batchId = randomUUID();
    const key = { keyId: randomUUID(), key: randomBytes(32) };
    const wrapped = DATA_KEYS.wrap(key.key);
    log.keys.push({ key_id: key.keyId, subject_id: batchId, kek_id: wrapped.kekId, wrapped_key: wrapped.wrapped.toString('hex') });
    const ids = Array.from({ length: size }, () => ++passId);
    const publicIds = ids.map((id) => `gst_${id.toString(16).padStart(32, '0')}`);
    const qrValues = Object.fromEntries(publicIds.map((p) => [p, randomBytes(20).toString('base64url')]));
    const guest: GuestDetails = {
      firstName: `Guest${ids[0]}`,
      lastName: 'Visitor',
      email: `guest${ids[0]}@example.com`,
      phone: '+15550100',
      country: null,
      vehicleNumber: null,
      notes: null,
      invitedBy: null,
      qrValues,
    };
    const sealed = seal(key, guest);
    const stream = streams.guestInvites(createdBy, '2025-03');
    ids.forEach((id, i) => {
      const qrHash = sha256(qrValues[publicIds[i]!]!);
      log.add(stream, {
        type: 'PassCreated',
        data: {
          passId: id,
          publicId: publicIds[i]!,
          orgId,
          facilityId,
          createdBy,
          batchId,
          batchSize: size,
          arrivalDate: '2025-03-20',
          arrivalTime: '10:00',
          validFrom: '2025-03-20T10:00:00.000Z',
          validUntil: '2025-03-20T23:59:59.999Z',
          qrHash,
          guest: sealed,
          passLinkHash: null,
        },
      });
      live.push({ passId: id, orgId, facilityId, stream, publicId: publicIds[i]!, qrHash });
      passes++;
    });
  }
  return { log, passes, revoked };
}

/**
 * CPU seconds used so far by the server processes serving `database` (Linux /proc; null
 * elsewhere): those running, and those that have ended (the postmaster's children's time: the
 * rebuild's own connections once closed, and autovacuum's workers). With the node process's own
 * CPU time it shows the work apart from the wall time, which on a shared machine also counts
 * waiting for other processes.
 */
function serverCpuSeconds(database: string, postmaster: number): number | null {
  try {
    const ended = procStat(postmaster);
    let ticks = Number(ended[13]) + Number(ended[14]); // cutime + cstime: children ended and reaped
    for (const pid of readdirSync('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      try {
        if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(database)) continue;
        const fields = procStat(pid);
        ticks += Number(fields[11]) + Number(fields[12]); // utime + stime
      } catch {
        // the process ended meanwhile
      }
    }
    return ticksToSeconds(ticks);
  } catch {
    return null;
  }
}

/** The server's postmaster: the parent of this connection's backend (null elsewhere than Linux). */
async function postmasterPid(knex: Knex): Promise<number | null> {
  const { rows } = await knex.raw<{ rows: Array<{ pid: number }> }>('SELECT pg_backend_pid() AS pid');
  try {
    return Number(procStat(rows[0]!.pid)[1]); // ppid
  } catch {
    return null;
  }
}

/** Bulk insert in chunks: each chunk is one transaction, so global order is insertion order. */
async function seed(knex: Knex, log: LogBuilder): Promise<void> {
  const CHUNK = 10_000;
  for (let i = 0; i < log.keys.length; i += CHUNK) {
    await knex.raw(
      `INSERT INTO subject_keys (key_id, subject_id, kek_id, wrapped_key)
       SELECT key_id, subject_id, kek_id, decode(wrapped_key, 'hex')
       FROM json_to_recordset(?::json) AS k(key_id text, subject_id text, kek_id text, wrapped_key text)`,
      [JSON.stringify(log.keys.slice(i, i + CHUNK))],
    );
  }
  for (let i = 0; i < log.rows.length; i += CHUNK) {
    // ORDER BY the array index: global positions are drawn in that order, so each stream's
    // revisions follow the global order as they do when appended one by one.
    await knex.raw(
      `INSERT INTO events (stream_name, stream_position, event_id, type, data, metadata)
       SELECT e->>'stream_name', (e->>'stream_position')::int, (e->>'event_id')::uuid, e->>'type', e->'data', e->'metadata'
       FROM jsonb_array_elements(?::jsonb) WITH ORDINALITY AS t(e, ord) ORDER BY ord`,
      [JSON.stringify(log.rows.slice(i, i + CHUNK))],
    );
  }
}

/** Child process: builds and inserts the log, then reports what it wrote. */
async function seedChild(url: string, target: number): Promise<void> {
  const knex = createKnex(url, { max: 2 });
  try {
    const { log, passes, revoked } = buildLog(target);
    await seed(knex, log);
    process.stdout.write(JSON.stringify({ events: log.rows.length, passes, revoked }) + '\n');
  } finally {
    await knex.destroy();
  }
}

/** Seeding runs in a child process, so its garbage and memory do not count against the rebuild. */
function seedInChild(url: string, target: number): Promise<{ events: number; passes: number; revoked: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--seed-child', url, '--events', String(target)], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, [KEK_ENV]: DATA_KEK.toString('hex') },
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`seeding failed (exit ${code})`));
      resolve(JSON.parse(out.trim().split('\n').at(-1)!) as { events: number; passes: number; revoked: number });
    });
  });
}

async function main(): Promise<void> {
  const target = integerOption('events', 200_000);
  const seedAt = process.argv.indexOf('--seed-child');
  if (seedAt >= 0) return seedChild(process.argv[seedAt + 1]!, target);
  const batchSize = integerOption('batch-size', DEFAULT_REBUILD_BATCH_SIZE);
  const guard = setTimeout(() => {
    console.error(`bench exceeded ${TIME_LIMIT_MS / 1000}s; stopping`);
    process.exit(2);
  }, TIME_LIMIT_MS);
  guard.unref();

  // A scratch database on DATABASE_URL's server or an embedded one.
  const url = await freshDatabase('bench_rebuild');
  const database = new URL(url).pathname.slice(1);
  const knex = createKnex(url, { max: 10 });
  const store = createEventStore({ databaseUrl: url, eventStoreUrl: null, schemas: eventSchemas });
  try {
    await migrateToLatest(knex);
    const t0 = performance.now();
    const { events, passes, revoked } = await seedInChild(url, target);
    await knex.raw('ANALYZE');
    const seedMs = performance.now() - t0;
    console.log(`seeded ${events.toLocaleString('en')} events (${passes.toLocaleString('en')} passes, ${revoked.toLocaleString('en')} revocations) in ${(seedMs / 1000).toFixed(1)} s`);
    // The log's size on disk per event (table, TOAST and indexes): what docs/capacity.md sizes storage from.
    const size = await knex.raw<{ rows: Array<{ bytes: string }> }>(`SELECT pg_total_relation_size('events')::text AS bytes`);
    const logBytes = Number(size.rows[0]!.bytes);
    console.log(`log on disk ${(logBytes / 1024 / 1024).toFixed(0)} MB, ${Math.round(logBytes / events)} bytes per event (indexes included)`);

    const show = showRebuildProgress(new ProgressBar({ label: 'rebuild' }));
    let peakRss = process.memoryUsage().rss;
    const phaseStarted = new Map<string, number>();
    let currentPhase = '';
    const loopBefore = performance.eventLoopUtilization();
    const cpuBefore = process.cpuUsage();
    const postmaster = await postmasterPid(knex);
    const serverBefore = postmaster === null ? null : serverCpuSeconds(database, postmaster);
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 100);
    const result = await rebuildProjections(
      undefined,
      { knex, store, subjectKeys: new PostgresSubjectKeyStore(knex, DATA_KEYS), logger: createLogger('warn') },
      {
        batchSize,
        onProgress: (p) => {
          if (p.phase !== currentPhase) {
            phaseStarted.set(p.phase, p.elapsedMs);
            currentPhase = p.phase;
          }
          show(p);
        },
      },
    );
    clearInterval(sampler);
    const loop = performance.eventLoopUtilization(loopBefore);
    const cpu = process.cpuUsage(cpuBefore);
    const serverAfter = postmaster === null ? null : serverCpuSeconds(database, postmaster);
    // The kernel's high-water mark (KiB) also catches peaks between two samples.
    peakRss = Math.max(peakRss, process.memoryUsage().rss, process.resourceUsage().maxRSS * 1024);

    const check = await knex.raw<{ rows: Array<{ passes: string; cancelled: string; counted: string; used: string }> }>(
      `SELECT (SELECT count(*) FROM pass_list)::text AS passes,
              (SELECT count(*) FROM pass_list WHERE status = 'cancelled')::text AS cancelled,
              (SELECT sum(pass_count) FROM organizations)::text AS counted,
              (SELECT sum(used) FROM invite_allowance_usage)::text AS used`,
    );
    const c = check.rows[0]!;
    const exact = Number(c.passes) === passes && Number(c.cancelled) === revoked && Number(c.counted) === passes && Number(c.used) === passes;

    const at = (phase: string) => phaseStarted.get(phase) ?? result.durationMs;
    const phases = {
      replay_s: Number((at('indexing') / 1000).toFixed(2)),
      indexing_s: Number(((at('switching') - at('indexing')) / 1000).toFixed(2)),
      switch_s: Number(((result.durationMs - at('switching')) / 1000).toFixed(2)),
    };
    const figures = {
      events: result.events,
      duration_s: Number((result.durationMs / 1000).toFixed(2)),
      events_per_second: Math.round(result.eventsPerSecond),
      target_events_per_second: 20_000,
      peak_rss_mb: Math.round(peakRss / 1024 / 1024),
      node_cpu_s: Number(((cpu.user + cpu.system) / 1e6).toFixed(2)),
      postgres_cpu_s: serverBefore === null || serverAfter === null ? null : Number((serverAfter - serverBefore).toFixed(2)),
      // Share of the time the main thread was busy: near 1, the JavaScript side sets the pace.
      event_loop_utilization: Number(loop.utilization.toFixed(2)),
      load_average_1m: Number(os.loadavg()[0]!.toFixed(2)),
      ...phases,
      batch_size: batchSize,
      read_models_exact: exact,
      postgres: databaseKind() === 'embedded' ? 'embedded' : 'DATABASE_URL',
    };
    console.log('');
    console.log('projection rebuild (all read models, one pass over the log)');
    console.log(`  events            ${figures.events.toLocaleString('en')}`);
    console.log(`  duration          ${figures.duration_s} s (replay ${phases.replay_s} s, secondary indexes ${phases.indexing_s} s, catch-up and switch ${phases.switch_s} s)`);
    console.log(`  throughput        ${figures.events_per_second.toLocaleString('en')} events/s (target >= 20,000) ${figures.events_per_second >= 20_000 ? 'OK' : 'BELOW TARGET'}`);
    console.log(`  peak RSS          ${figures.peak_rss_mb} MB`);
    console.log(`  CPU               node ${figures.node_cpu_s} s, postgres ${figures.postgres_cpu_s ?? '?'} s (load average ${figures.load_average_1m} on ${os.cpus().length} cores)`);
    console.log(`  main thread busy  ${Math.round(figures.event_loop_utilization * 100)}% of the rebuild`);
    console.log(`  read models exact ${exact ? 'yes' : 'NO'}`);
    console.log(JSON.stringify(figures));
    if (!exact) process.exitCode = 1;
  } finally {
    await store.close();
    await knex.destroy();
    await stopTestDatabases();
  }
}

withServiceNodeFlags();
main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
