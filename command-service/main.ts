// Runs the command service alone: `node dist/command-service/main.js`, configured by the
// environment (shared/config.ts; DATABASE_URL, EVENTSTORE_URL, PORT, HOST, TRUST_PROXY, ...).
// The projections run in their own process (projections/main.ts); writes wait for them
// (PROJECTION_WAIT_MS) so the next read sees the write.
import { loadConfig } from '../shared/config.js';
import { createLogger } from '../shared/logger.js';
import { describeStartupError } from '../shared/startup-error.js';
import { openRuntime } from '../runtime/runtime.js';
import { defaultBaseUrl } from '../runtime/base-url.js';
import { runService } from '../shared/http/serve.js';
import { databaseCheck, eventStoreCheck } from '../shared/http/readiness.js';
import { createCommandApp } from './app.js';
import { sharedRateLimitStore } from '../shared/http/rate-limit-store.js';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, 'command-service', config.logFormat);
  await runService({ config, logger, name: 'command service' }, async (server) => {
    // DATABASE_URL, else the embedded server a running `npm start` recorded, else an embedded one;
    // migrates, and builds the event store (createEventStore) and the other ports.
    const runtime = await openRuntime(config, logger);
    try {
      // Behind the gateway, PUBLIC_BASE_URL is the issuer; alone, this process's own address.
      const oauth = await runtime.oauth(defaultBaseUrl(config, server.port));
      await oauth.signingKeys.current();
      // Every instance counts in one place (Redis, else PostgreSQL): the limits hold across replicas and restarts.
      const rateLimits = await sharedRateLimitStore(config.redisUrl, runtime.deps.db, { log: logger });
      const app = createCommandApp({ ...runtime.deps, logger, config, oauth, rateLimitStore: rateLimits.store });
      const close = async () => {
        await rateLimits.close();
        await runtime.close();
      };
      return { app: app.callback(), checks: [databaseCheck(runtime.knex), eventStoreCheck(runtime.store)], close };
    } catch (error) {
      await runtime.close().catch(() => undefined);
      throw error;
    }
  });
}

main().catch((error: unknown) => {
  console.error(`command-service: ${describeStartupError(error)}`);
  process.exit(1);
});
