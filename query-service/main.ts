// Runs the query service alone: `node dist/query-service/main.js`, configured by the environment
// (shared/config.ts). It only reads the read models: DATABASE_URL, or the embedded server that a
// running `npm start` recorded in the data folder. It never migrates; the command service and
// `npm start` do.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { loadConfig } from '../shared/config.js';
import { createLogger } from '../shared/logger.js';
import { describeStartupError } from '../shared/startup-error.js';
import { createKnex } from '../shared/db/knex.js';
import { createPgPool } from '../shared/db/pg-pool.js';
import { embeddedUrlFile } from '../shared/db/embedded-postgres.js';
import { runService } from '../shared/http/serve.js';
import { databaseCheck } from '../shared/http/readiness.js';
import { createQueryApp } from './app.js';
import { sharedRateLimitStore } from '../shared/http/rate-limit-store.js';
import { defaultBaseUrl } from '../runtime/base-url.js';
import { loadDataKeyRing } from '../runtime/data-kek.js';
import { PostgresSubjectKeyStore } from '../shared/crypto/postgres-subject-key-store.js';
import { loadContactHasher } from '../shared/crypto/postgres-contact-search-key.js';
import { PostgresSigningKeyStore } from '../shared/oauth/postgres-signing-key-store.js';
import { publishedJwks } from '../shared/oauth/signing-keys.js';
import { refreshingKeySet } from '../shared/oauth/tokens.js';

async function databaseUrl(config: ReturnType<typeof loadConfig>): Promise<string> {
  if (config.databaseUrl) return config.databaseUrl;
  const recorded = embeddedUrlFile(config.dataDir);
  if (existsSync(recorded)) return (await readFile(recorded, 'utf8')).trim();
  throw new Error('set DATABASE_URL (or start the embedded default with `npm start` first): the query service only reads');
}

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, 'query-service', config.logFormat);
  await runService({ config, logger, name: 'query service' }, async (server) => {
    const url = await databaseUrl(config);
    const db = createKnex(url, { max: 20 });
    // Only the public halves of the signing keys are read here: tokens are verified offline.
    const keyPool = createPgPool(url, 2);
    // Every instance counts in one place (Redis, else PostgreSQL): the limits hold across replicas and restarts.
    const rateLimits = await sharedRateLimitStore(config.redisUrl, db, { log: logger });
    const close = async () => {
      await rateLimits.close();
      await keyPool.end();
      await db.destroy();
    };
    try {
      const keys = new PostgresSigningKeyStore(keyPool);
      const oauth = { issuer: defaultBaseUrl(config, server.port), verificationKeys: refreshingKeySet(() => publishedJwks(keys)) };
      // Give every replica the same PAGE_CURSOR_SECRET, or a cursor only works on the replica that made it.
      // Member contacts are opened with the subject keys (wrapped under the data KEK ring); searched
      // emails and phones are hashed under the stored contact search key, as the projections hash them.
      const ring = await loadDataKeyRing(config);
      const subjectKeys = new PostgresSubjectKeyStore(db, ring);
      const contactHasher = await loadContactHasher(db, ring);
      const app = createQueryApp({ db, logger, config, oauth, subjectKeys, contactHasher, rateLimitStore: rateLimits.store });
      return { app: app.callback(), checks: [databaseCheck(db)], close };
    } catch (error) {
      await close().catch(() => undefined);
      throw error;
    }
  });
}

main().catch((error: unknown) => {
  console.error(`query-service: ${describeStartupError(error)}`);
  process.exit(1);
});
