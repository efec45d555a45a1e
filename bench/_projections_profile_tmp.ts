// TEMPORARY profiling helper (deleted before hand-off).
import { performance } from 'node:perf_hooks';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { createKnex } from '../shared/db/knex.js';
import { migrateToLatest } from '../shared/db/migrate.js';
import { startEmbeddedPostgres, withDatabase } from '../shared/db/embedded-postgres.js';
import { createEventStore } from '../shared/event-store/create-event-store.js';
import { eventSchemas } from '../shared/domain/event-schemas.js';
import { PostgresSubjectKeyStore } from '../shared/crypto/postgres-subject-key-store.js';
import { openGuestData } from '../projections/guest-data.js';
import { ALL_PROJECTIONS } from '../projections/all-projections.js';
import { TableWriter } from '../projections/table-writer.js';
import { createGenerationTable, inTransaction } from '../projections/generation-tables.js';
import { START } from '../shared/event-store/event-store.js';

const N = Number(process.argv[2] ?? 30000);
const embedded = await startEmbeddedPostgres({ dataDir: path.join(os.tmpdir(), `gp-prof-${process.pid}`, 'pg'), persistent: false });
const admin = new pg.Client({ connectionString: embedded.url });
await admin.connect();
const dbname = `prof_${randomBytes(3).toString('hex')}`;
await admin.query(`CREATE DATABASE ${dbname}`);
const url = withDatabase(embedded.url, dbname);
const knex = createKnex(url);
await migrateToLatest(knex);
// Seed via the bench builder
const mod = await import('./projection-rebuild-seed-tmp.js');
let t = performance.now();
await mod.seedFor(knex, N);
console.log('seed', Math.round(performance.now() - t), 'ms');
const store = createEventStore({ databaseUrl: url, eventStoreUrl: null, schemas: eventSchemas });
const keys = new PostgresSubjectKeyStore(knex);
const pages = [];
t = performance.now();
let after = START;
for (;;) { const p = await store.readAll({ after, maxCount: 5000 }); if (!p.length) break; pages.push(p); after = p.at(-1)!.position; }
console.log('read', Math.round(performance.now() - t), 'ms');
{ const { createPostgresEventStore } = await import('../shared/event-store/postgres-event-store.js'); const raw = createPostgresEventStore(url);
t = performance.now(); let a = START; for (;;) { const p = await raw.readAll({ after: a, maxCount: 5000 }); if (!p.length) break; a = p.at(-1)!.position; }
console.log('raw read', Math.round(performance.now() - t), 'ms'); await raw.close(); }
t = performance.now();
const opened = [];
for (const p of pages) opened.push(await openGuestData(p, keys, { open: true }));
console.log('open', Math.round(performance.now() - t), 'ms');
const writer = new TableWriter();
for (const projection of ALL_PROJECTIONS) {
  const table = await createGenerationTable(knex, projection, 5, { indexes: false });
  t = performance.now();
  for (const p of opened) await inTransaction(knex, async (c) => { await c.query('SET LOCAL synchronous_commit = off'); await writer.write(c, projection, table, p); });
  console.log('write', projection.name, Math.round(performance.now() - t), 'ms');
}
await store.close(); await knex.destroy(); await admin.end(); await embedded.stop();
