// TEMPORARY profiling helper (deleted before hand-off).
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { createKnex } from '../shared/db/knex.js';
import { migrateToLatest } from '../shared/db/migrate.js';
import { startEmbeddedPostgres, withDatabase } from '../shared/db/embedded-postgres.js';
import { createEventStore } from '../shared/event-store/create-event-store.js';
import { createPostgresEventStore } from '../shared/event-store/postgres-event-store.js';
import { eventSchemas } from '../shared/domain/event-schemas.js';
import { PostgresSubjectKeyStore } from '../shared/crypto/postgres-subject-key-store.js';
import { openGuestData } from '../projections/guest-data.js';
import { ALL_PROJECTIONS } from '../projections/all-projections.js';
import { projectBatch, type ProjectionEvent } from '../projections/projection.js';
import { START, type RecordedEvent } from '../shared/event-store/event-store.js';

const N = Number(process.argv[2] ?? 30000);
const embedded = await startEmbeddedPostgres({ dataDir: path.join(os.tmpdir(), `gp-prof-${process.pid}`, 'pg'), persistent: false });
const admin = new pg.Client({ connectionString: embedded.url });
await admin.connect();
const dbname = `prof_${randomBytes(3).toString('hex')}`;
await admin.query(`CREATE DATABASE ${dbname}`);
const url = withDatabase(embedded.url, dbname);
const knex = createKnex(url);
await migrateToLatest(knex);
const mod = await import('./projection-rebuild-seed-tmp.js');
await mod.seedFor(knex, N);
const cpu = async <T>(label: string, f: () => Promise<T> | T): Promise<T> => {
  const c = process.cpuUsage(); const t = performance.now();
  const r = await f();
  const u = process.cpuUsage(c);
  console.log(label.padEnd(28), 'cpu', ((u.user + u.system) / 1000).toFixed(0).padStart(6), 'ms  wall', (performance.now() - t).toFixed(0).padStart(6), 'ms');
  return r;
};
const raw = createPostgresEventStore(url);
const store = createEventStore({ databaseUrl: url, eventStoreUrl: null, schemas: eventSchemas });
const readAllPages = async (s: typeof raw) => { const pages: RecordedEvent[][] = []; let a = START; for (;;) { const p = await s.readAll({ after: a, maxCount: 5000 }); if (!p.length) break; pages.push(p); a = p.at(-1)!.position; } return pages; };
const rawPages = await cpu('raw read', () => readAllPages(raw));
await cpu('validating read', () => readAllPages(store as any));
await cpu('validate only', () => { for (const p of rawPages) for (const e of p) eventSchemas.validate(e.type, 1, e.data); });
const keys = new PostgresSubjectKeyStore(knex);
const opened = await cpu('open guests', async () => { const o: ProjectionEvent[][] = []; for (const p of rawPages) o.push(await openGuestData(p, keys, { open: true })); return o; });
for (const projection of ALL_PROJECTIONS) {
  const rows = new Map();
  const changes = await cpu('project ' + projection.name, () => { const all = []; for (const p of opened) all.push(projectBatch(projection, rows, p)); return all; });
  await cpu('stringify ' + projection.name, () => { for (const c of changes) JSON.stringify(c.upserts); });
}
await raw.close(); await store.close(); await knex.destroy(); await admin.end(); await embedded.stop();
