// The composition root shared by `npm start` (embedded.ts), the operator CLI and the command
// service's and projections' main.ts: finds or starts PostgreSQL, migrates, and builds the ports
// every command use case is given. The query service needs none of the command side: it takes
// base-url.ts and data-kek.ts alone.
import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { ConfigError, type Config } from '../shared/config.js';
import type { Logger } from '../shared/logger.js';
import { createKnex, type Knex } from '../shared/db/knex.js';
import { migrateToLatest } from '../shared/db/migrate.js';
import {
  embeddedUrlFile,
  recordEmbeddedUrl,
  startEmbeddedPostgres,
  withDatabase,
  type EmbeddedServer,
} from '../shared/db/embedded-postgres.js';
import { createEventStore } from '../shared/event-store/create-event-store.js';
import { eventSchemas } from '../shared/domain/event-schemas.js';
import { CommandHandler } from '../shared/event-store/command-handler.js';
import type { EventStore } from '../shared/event-store/event-store.js';
import { PostgresIdAllocator, SERVICE_ID_BLOCKS } from '../shared/domain/postgres-id-allocator.js';
import { PostgresSubjectKeyStore } from '../shared/crypto/postgres-subject-key-store.js';
import { DataKeyRingError, type DataKeyRing } from '../shared/crypto/data-key-ring.js';
import { loadContactHasher } from '../shared/crypto/postgres-contact-search-key.js';
import type { ContactHasher } from '../shared/crypto/contact-search.js';
import { loadDataKeyRing } from './data-kek.js';
import { PostgresReadModelWatermark } from '../projections/watermark.js';
import type { CommandDeps } from '../command-service/command-deps.js';
import { loadOrCreateKeyEncryptionKey } from '../shared/oauth/key-encryption-key.js';
import { createOAuthServices, type OAuthServices } from '../shared/oauth/oauth-services.js';
import { PostgresDeliveryOutcomes } from '../shared/delivery/delivery-outcomes.js';

export interface Runtime {
  readonly databaseUrl: string;
  readonly knex: Knex;
  readonly store: EventStore;
  readonly deps: CommandDeps;
  /** Feed an in-process projection runner's progress to it (observe) to skip the NOTIFY round trip. */
  readonly watermark: PostgresReadModelWatermark;
  /** What a pass create waits on for its email and SMS (fed by a delivery worker in any process). */
  readonly deliveryOutcomes: PostgresDeliveryOutcomes;
  /** Set when this process started the embedded PostgreSQL server. */
  readonly embedded: EmbeddedServer | null;
  /** Hashes contact values for search, under the service's contact search key. */
  readonly contactHasher: ContactHasher;
  /** The data keys' wrapping: the KEK ring, and the store's rewrap of every key under its current KEK. */
  readonly dataKeys: DataKeys;
  /** The authorization server's ports for this issuer (closed with the runtime). */
  oauth(issuer: string): Promise<OAuthServices>;
  close(): Promise<void>;
}

export interface DataKeys {
  readonly ring: DataKeyRing;
  /** How many keys opening the runtime (re)wrapped under the current KEK (legacy rows, a previous KEK). */
  readonly rewrappedOnOpen: number;
  rewrapAll(): Promise<{ rewrapped: number }>;
}

/** OAUTH_KEY_ENCRYPTION_KEY, else a key generated once into the data folder (embedded default). */
export async function keyEncryptionKey(config: Pick<Config, 'oauthKeyEncryptionKey' | 'dataDir'>): Promise<Buffer> {
  return config.oauthKeyEncryptionKey ?? loadOrCreateKeyEncryptionKey(path.join(config.dataDir, 'oauth-kek'));
}

const EMBEDDED_DATABASE = 'guestpass';

/** The database cannot be reached (closed port, unknown host, missing database, refused login). */
export class DatabaseUnreachable extends Error {
  override readonly name = 'DatabaseUnreachable';
}

/** host:port/database of a connection string, never its credentials. */
function describeDatabase(url: string): string {
  try {
    const u = new URL(url);
    return `${u.host || 'localhost'}${u.pathname}`;
  } catch {
    return 'in DATABASE_URL';
  }
}

/** True when a running `npm start` recorded its embedded PostgreSQL server in this data folder and it answers. */
export async function embeddedServerRunning(dataDir: string): Promise<boolean> {
  const urlFile = embeddedUrlFile(dataDir);
  if (!existsSync(urlFile)) return false;
  const recorded = (await readFile(urlFile, 'utf8')).trim();
  return recorded !== '' && (await connectionFailure(recorded, 1500)) === null;
}

/** Connects once and lets go: null when the database answered, else why not. */
async function connectionFailure(url: string, timeoutMs: number): Promise<string | null> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  // A server that drops the connection after it opened must not become an unhandled 'error'.
  client.on('error', () => undefined);
  try {
    await client.connect();
    return null;
  } catch (error) {
    // `localhost` tries ::1 and 127.0.0.1: refused on both, the AggregateError's own message is empty.
    const e = error as Error & { code?: string; errors?: Error[] };
    return e.message || e.errors?.map((x) => x.message).join('; ') || e.code || String(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function ensureDatabase(serverUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (!rowCount) await client.query(`create database ${name}`);
  } finally {
    await client.end();
  }
}

/**
 * DATABASE_URL when set; otherwise the embedded server a running `npm start` recorded in the data
 * folder; otherwise this process starts the embedded server itself (data kept under ./var).
 */
async function resolveDatabase(config: Config, logger: Logger): Promise<{ url: string; embedded: EmbeddedServer | null; reached: boolean }> {
  if (config.databaseUrl) return { url: config.databaseUrl, embedded: null, reached: false };
  const urlFile = embeddedUrlFile(config.dataDir);
  if (existsSync(urlFile)) {
    const recorded = (await readFile(urlFile, 'utf8')).trim();
    if (recorded && (await connectionFailure(recorded, 1500)) === null) return { url: recorded, embedded: null, reached: true };
  }
  logger.info({ dataDir: config.dataDir }, 'starting the embedded PostgreSQL server');
  const embedded = await startEmbeddedPostgres({ dataDir: path.join(config.dataDir, 'pg') });
  await ensureDatabase(embedded.url, EMBEDDED_DATABASE);
  const url = withDatabase(embedded.url, EMBEDDED_DATABASE);
  await recordEmbeddedUrl(config.dataDir, url);
  return { url, embedded, reached: true };
}

export async function openRuntime(config: Config, logger: Logger): Promise<Runtime> {
  const { url, embedded, reached } = await resolveDatabase(config, logger);
  // DATABASE_URL is tried once before the pool: an unreachable database is one clear line, not
  // the pool's logged retries and stack traces.
  const failure = reached ? null : await connectionFailure(url, 10_000);
  if (failure !== null) throw new DatabaseUnreachable(`cannot connect to the database ${describeDatabase(url)}: ${failure}`);
  const knex = createKnex(url, { max: 10 });
  let subjectKeys: PostgresSubjectKeyStore;
  let contactHasher: ContactHasher;
  let dataKeys: DataKeys;
  try {
    await migrateToLatest(knex);
    const ring = await loadDataKeyRing(config);
    // Opening the search key first proves the ring is this database's: a process given another
    // KEK stops here, before it wraps anything under a key the others cannot open.
    contactHasher = await loadContactHasher(knex, ring);
    const keyStore = new PostgresSubjectKeyStore(knex, ring);
    // The first start after migration 010 wraps the keys stored in the clear; later starts finish a
    // rotation (keys under a previous KEK) or find nothing to do.
    const { rewrapped } = await keyStore.rewrapAll();
    if (rewrapped > 0) logger.info({ rewrapped, kekId: ring.currentKekId }, 'wrapped data keys under the current data key-encryption key');
    subjectKeys = keyStore;
    dataKeys = { ring, rewrappedOnOpen: rewrapped, rewrapAll: () => keyStore.rewrapAll() };
  } catch (error) {
    await knex.destroy();
    if (embedded) await embedded.stop();
    if (error instanceof DataKeyRingError) {
      throw new ConfigError(`${error.message}; use the service's DATA_KEY_ENCRYPTION_KEY (and DATA_KEY_ENCRYPTION_KEY_PREVIOUS) or GUESTPASS_DATA_DIR`);
    }
    throw error;
  }
  const store = createEventStore({ databaseUrl: url, eventStoreUrl: config.eventStoreUrl, schemas: eventSchemas, logger });
  const watermark = new PostgresReadModelWatermark(knex);
  const deliveryOutcomes = new PostgresDeliveryOutcomes(knex, store, logger);
  const deps: CommandDeps = {
    store,
    handler: new CommandHandler(store),
    ids: new PostgresIdAllocator(knex, SERVICE_ID_BLOCKS),
    subjectKeys,
    contactHasher,
    db: knex,
    watermark,
    readModelChanges: watermark,
    projectionWaitMs: config.projectionWaitMs,
    deliveryOutcomes,
    deliveryWaitMs: config.deliveryWaitMs,
  };
  const opened: OAuthServices[] = [];
  return {
    databaseUrl: url,
    knex,
    store,
    deps,
    watermark,
    deliveryOutcomes,
    embedded,
    contactHasher,
    dataKeys,
    async oauth(issuer) {
      const services = createOAuthServices(knex, url, { issuer, kek: await keyEncryptionKey(config), federation: config.federation });
      opened.push(services);
      return services;
    },
    async close() {
      await Promise.all(opened.map((s) => s.close()));
      await deliveryOutcomes.close();
      await watermark.close();
      await store.close();
      await knex.destroy();
      if (embedded) {
        await rm(embeddedUrlFile(config.dataDir), { force: true });
        await embedded.stop();
      }
    },
  };
}
