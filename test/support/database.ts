// One PostgreSQL server per test run, and a fresh database per suite that asks for one.
// With DATABASE_URL the machine's server is used; without it an embedded server is started.
import pg from 'pg';
import os from 'node:os';
import path from 'node:path';
import { rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { startEmbeddedPostgres, withDatabase, type EmbeddedServer } from '../../shared/db/embedded-postgres.js';
import { createKnex, type Knex } from '../../shared/db/knex.js';
import { migrateToLatest } from '../../shared/db/migrate.js';

let server: Promise<{ url: string; embedded: EmbeddedServer | null; dir: string | null }> | null = null;
const created: string[] = [];

/**
 * The run's server, started once. A server that cannot start fails every suite that asks for a
 * database at once, with the same one-line cause (startEmbeddedPostgres never hangs).
 */
function startServer() {
  server ??= (async () => {
    const external = process.env.DATABASE_URL?.trim();
    if (external) return { url: external, embedded: null, dir: null };
    const dir = path.join(os.tmpdir(), `guestpass-test-${process.pid}-${randomBytes(3).toString('hex')}`);
    const embedded = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg'), persistent: false });
    return { url: embedded.url, embedded, dir };
  })();
  return server;
}

/** Which PostgreSQL the tests run against, for test titles and logs. */
export function databaseKind(): 'external' | 'embedded' {
  return process.env.DATABASE_URL?.trim() ? 'external' : 'embedded';
}

/** Creates an empty database on the run's server and returns its URL; dropped at the end of the run. */
export async function freshDatabase(label = 'db'): Promise<string> {
  const { url } = await startServer();
  const name = `gp_test_${label.replace(/[^a-z0-9_]/gi, '_').toLowerCase()}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  created.push(name);
  return withDatabase(url, name);
}

export async function stopTestDatabases(): Promise<void> {
  if (!server) return;
  const started = await server.catch(() => null);
  server = null;
  if (!started) return; // it never started: the suites that needed it failed saying why
  const { url, embedded, dir } = started;
  if (embedded) {
    await embedded.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  } else {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      for (const name of created) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    } finally {
      await admin.end();
    }
  }
  server = null;
}

/** A fresh database with every migration applied, and a knex on it (the caller destroys it). */
export async function migratedDatabase(label = 'db', pool: { max?: number } = {}): Promise<{ url: string; knex: Knex }> {
  const url = await freshDatabase(label);
  const knex = createKnex(url, pool);
  try {
    await migrateToLatest(knex);
  } catch (error) {
    await knex.destroy();
    throw error;
  }
  return { url, knex };
}

/** A fresh, migrated database, for suites that open their own connections. */
export async function migratedDatabaseUrl(label = 'db'): Promise<string> {
  const { url, knex } = await migratedDatabase(label);
  await knex.destroy();
  return url;
}
