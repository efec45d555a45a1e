// Runs the query service alone: `node dist/query-service/main.js`, configured by the environment
// (shared/config.ts). It only reads the read models: DATABASE_URL, or the embedded server that a
// running `npm start` recorded in the data folder. It never migrates; the command service and
// `npm start` do.
import http from 'node:http';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { loadConfig } from '../shared/config.js';
import { createLogger } from '../shared/logger.js';
import { createKnex } from '../shared/db/knex.js';
import { embeddedUrlFile } from '../shared/db/embedded-postgres.js';
import { createQueryApp } from './app.js';

async function databaseUrl(config: ReturnType<typeof loadConfig>): Promise<string> {
  if (config.databaseUrl) return config.databaseUrl;
  const recorded = embeddedUrlFile(config.dataDir);
  if (existsSync(recorded)) return (await readFile(recorded, 'utf8')).trim();
  throw new Error('set DATABASE_URL (or start the embedded default with `npm start` first): the query service only reads');
}

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, 'query-service');
  const db = createKnex(await databaseUrl(config), { max: 20 });
  // Give every replica the same PAGE_CURSOR_SECRET, or a cursor only works on the replica that made it.
  const app = createQueryApp({ db, logger, config });
  const server = http.createServer(app.callback());
  server.listen(config.port, config.host, () => logger.info({ host: config.host, port: config.port }, 'query service listening'));

  const stop = async (signal: string) => {
    logger.info({ signal }, 'stopping');
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await db.destroy();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
