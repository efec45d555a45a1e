// `npm start`: the whole service in one process on the embedded default. PostgreSQL is embedded
// unless DATABASE_URL is set; the command and query apps share one port behind the in-process
// gateway; the projections runner follows the event store in the same process.
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { loadConfig, type Config } from '../shared/config.js';
import { createLogger, type Logger } from '../shared/logger.js';
import { describeStartupError } from '../shared/startup-error.js';
import { comparePositions, START } from '../shared/event-store/event-store.js';
import { ORG_SCOPES } from '../shared/domain/events.js';
import type { CommandContext } from '../shared/event-store/command-handler.js';
import { sharedRateLimitStore } from '../shared/http/rate-limit-store.js';
import { mountGateway } from '../shared/http/gateway.js';
import { openServiceServer } from '../shared/http/service-server.js';
import { databaseCheck, eventStoreCheck, kafkaCheck, waitUntilReady } from '../shared/http/readiness.js';
import { READY_WAIT_MS } from '../shared/http/serve.js';
import { KafkaPassBus } from '../shared/pass-bus/kafka-pass-bus.js';
import { observeDeliveryOutcomes } from '../shared/metrics/delivery-metrics.js';
import { observeLogLag } from '../projections/lag-metrics.js';
import { createCommandApp } from '../command-service/app.js';
import { createQueryApp } from '../query-service/app.js';
import { ProjectionRunner } from '../projections/runner.js';
import { createOrganization } from '../command-service/organizations/create-organization.js';
import { addFacility } from '../command-service/facilities/add-facility.js';
import { addUser } from '../command-service/users/add-user.js';
import { createApiKey } from '../command-service/api-keys/create-api-key.js';
import { registerClient } from '../command-service/oauth-clients/register-client.js';
import { OAUTH_SCOPES } from '../shared/oauth/scopes.js';
import { startDoorPath } from '../door-gateway/embedded.js';
import { startConfiguredPassDelivery } from '../projections/pass-delivery.js';
import { keyEncryptionKey, openRuntime, type Runtime } from './runtime.js';
import { defaultBaseUrl } from './base-url.js';
import { runAuditNotary } from '../projections/audit-notary-role.js';
import { onShutdownSignal } from '../shared/shutdown-signal.js';

/** The cursor secret survives restarts of the embedded default, so clients' cursors stay valid. */
async function pageCursorSecret(config: Config): Promise<string> {
  if (config.pageCursorSecret) return config.pageCursorSecret;
  const file = path.join(config.dataDir, 'page-cursor.secret');
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  await mkdir(config.dataDir, { recursive: true });
  const secret = randomBytes(32).toString('base64url');
  await writeFile(file, secret + '\n', { mode: 0o600 });
  return secret;
}

/** What the demo seed prints once: credentials exist only as hashes afterwards. */
export interface DemoCredentials {
  readonly apiKey: string;
  readonly adminEmail: string;
  readonly adminPassword: string;
  /** A public OAuth client for native apps (loopback redirect, RFC 8252) with every scope. */
  readonly clientId: string;
}

/**
 * On an empty event log: a demo organization, facility and admin (who signs in with a generated
 * password), an API key and a public OAuth client, shown once.
 */
async function seedDemo(runtime: Runtime, logger: Logger): Promise<DemoCredentials | null> {
  if (comparePositions(await runtime.store.headPosition(), START) !== 0) return null;
  const ctx: CommandContext = { correlationId: randomUUID(), causationId: null, actor: { kind: 'system', name: 'demo-seed' }, now: new Date() };
  const { deps } = runtime;
  const { orgId } = await createOrganization(deps, { name: 'Demo Organization' }, ctx);
  const { facilityId } = await addFacility(deps, { orgId, name: 'Main entrance', description: 'Demo facility' }, ctx);
  const adminEmail = 'admin@demo.invalid';
  const adminPassword = randomBytes(12).toString('base64url');
  const { userId } = await addUser(
    deps,
    { orgId, email: adminEmail, firstName: 'Demo', lastName: 'Admin', password: adminPassword, roles: ['admin', 'self_invite', 'employee_view'], inviteAllowance: null },
    ctx,
  );
  const { apiKey, keyId } = await createApiKey(deps, { orgId, userId, scopes: [...ORG_SCOPES], expiresAt: null, allowedIps: [] }, ctx);
  const { clientId } = await registerClient(
    deps,
    { orgId, name: 'Demo App', clientType: 'public', redirectUris: ['http://127.0.0.1/callback'], postLogoutRedirectUris: ['http://127.0.0.1/signed-out'], allowedScopes: [...OAUTH_SCOPES] },
    ctx,
  );
  logger.info({ orgId, facilityId, userId, keyId, clientId }, 'created the demo organization');
  return { apiKey, adminEmail, adminPassword, clientId };
}

export interface EmbeddedOptions {
  /** Aborted when the process begins to stop while it starts: the port refuses connections at once. */
  readonly stopping?: AbortSignal;
}

export async function startEmbedded(config: Config, logger: Logger, options: EmbeddedOptions = {}) {
  // The port first: it answers 503 with Retry-After (and /healthz 200) while the rest starts, and
  // the issuer is this server's address when PUBLIC_BASE_URL is not set (PORT=0).
  const server = await openServiceServer({ host: config.host, port: config.port, timeouts: config.http, metricsToken: config.metricsToken, logger, name: 'guestpass' });
  options.stopping?.addEventListener('abort', () => void server.close(), { once: true });
  let runtime: Runtime;
  try {
    runtime = await openRuntime(config, logger);
  } catch (error) {
    await server.close();
    throw error;
  }
  // What has started, stopped in reverse by stop() or when a later start-up step fails (a port
  // in use, an unreachable broker): a failed start leaves nothing running. The HTTP server stops
  // first: it lets the requests under way finish while everything they use still runs.
  const started: Array<() => Promise<void>> = [() => runtime.close()];
  const stopStarted = async () => {
    let failure: unknown = null;
    await server.close();
    for (const stop of started.splice(0).reverse()) {
      await stop().catch((error: unknown) => void (failure ??= error));
    }
    if (failure) throw failure;
  };
  try {
    // One contact search key for the projections (stored hashes) and the query app (searched values).
    const { contactHasher } = runtime;
    const runner = new ProjectionRunner(
      { knex: runtime.knex, store: runtime.store, subjectKeys: runtime.deps.subjectKeys, contactHasher, logger },
      {
        onProgress: (progress) => runtime.watermark.observe(progress),
        onRowsChanged: (projections) => runtime.watermark.observeRowsChanged(projections),
      },
    );
    await runner.start();
    started.push(() => runner.stop());
    // Pass events to the doors: in-process bus and an embedded MQTT broker with one simulated
    // controller per facility, unless KAFKA_BROKERS / MQTT_URL name real ones.
    const doorPath = await startDoorPath({ store: runtime.store, knex: runtime.knex, config, logger });
    started.push(() => doorPath.stop());

    // The audit notary: every event a leaf of the Merkle tree, signed heads, sample checks.
    const notary = runAuditNotary({ knex: runtime.knex, store: runtime.store, kek: await keyEncryptionKey(config), logger });
    started.push(() => notary.stop());

    const baseUrl = defaultBaseUrl(config, server.port);
    const oauth = await runtime.oauth(baseUrl);
    await oauth.signingKeys.current(); // the first start generates the signing key now, not on the first sign-in

    // Email and SMS of new passes: SMTP / an SMS provider when configured, else the outbox folder.
    const delivery = await startConfiguredPassDelivery(runtime, config, {
      baseUrl,
      logger,
      onRecorded: (batchId, report) => runtime.deliveryOutcomes.observe(batchId, report),
    });
    started.push(() => delivery.stop());

    // The limits count where the services count them (REDIS_URL, else this PostgreSQL), one store
    // for both apps (one bucket each): `npx guestpass limits` sees and lifts what this process locked out.
    const rateLimits = await sharedRateLimitStore(config.redisUrl, runtime.knex, { log: logger });
    started.push(() => rateLimits.close());
    const rateLimitStore = rateLimits.store;
    // One cursor secret for both apps: the API's lists and the console's.
    const cursorSecret = await pageCursorSecret(config);
    const commandApp = createCommandApp({ ...runtime.deps, logger, config: { ...config, pageCursorSecret: cursorSecret }, rateLimitStore, oauth });
    const queryApp = createQueryApp({
      db: runtime.knex,
      logger,
      config: { trustProxy: config.trustProxy, pageCursorSecret: cursorSecret },
      rateLimitStore,
      oauth,
      readModelChanges: runtime.watermark,
      subjectKeys: runtime.deps.subjectKeys,
      contactHasher,
    });
    // /metrics: read-model and reactor lag, delivery outcomes, beside the HTTP metrics (the door
    // path's are recorded by each of its gateway's terms).
    const metricsObservers = [observeLogLag({ knex: runtime.knex, store: runtime.store }), observeDeliveryOutcomes(runtime.knex)];
    started.push(async () => metricsObservers.forEach((stopObserving) => stopObserving()));
    const checks = [databaseCheck(runtime.knex), eventStoreCheck(runtime.store), doorPath.readinessCheck, notary.integrity.readinessCheck()];
    if (doorPath.bus instanceof KafkaPassBus) checks.push(kafkaCheck(doorPath.bus));
    // Serves once /readyz would say 200 (the embedded door path's MQTT link connects a moment after start).
    const failing = await waitUntilReady(checks, READY_WAIT_MS, options.stopping);
    if (failing.length > 0) logger.warn({ failing }, 'serving though parts are not ready yet');
    await server.serve(mountGateway(commandApp, queryApp), checks);

    // Last, once nothing else can fail: the demo credentials are shown once and stored only as
    // hashes, and the next start sees a non-empty log and seeds nothing, so a start that failed
    // after seeding would lose them for good. The door path gives the demo facility its simulated
    // controller on its next look for new facilities (within 5 s).
    const demo = await seedDemo(runtime, logger);

    let stopping: Promise<void> | null = null;
    const stop = () => (stopping ??= stopStarted());
    return { baseUrl, demo, demoKey: demo?.apiKey ?? null, runtime, doorPath, delivery: delivery.description, stop };
  } catch (error) {
    await stopStarted().catch((stopError: unknown) => logger.warn({ err: stopError }, 'stopping after a failed start failed'));
    throw error;
  }
}

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, 'guestpass', config.logFormat);
  // From the start: a signal while it starts closes the port at once, and stops the rest once started.
  const stopping = new AbortController();
  const starting = startEmbedded(config, logger, { stopping: stopping.signal });
  onShutdownSignal((signal: string) => {
    logger.info({ signal }, 'stopping');
    stopping.abort();
    starting
      .then(
        (service) => service.stop(),
        () => undefined, // the failed start stopped what it had started; main() reports it
      )
      .then(
        () => process.exit(0),
        (error: unknown) => {
          logger.error({ err: error }, 'stop failed');
          process.exit(1);
        },
      );
  });
  const service = await starting;
  if (stopping.signal.aborted) return;
  process.stdout.write(`\nguestpass is running at ${service.baseUrl}\n`);
  process.stdout.write(`  OpenAPI: ${service.baseUrl}/api/v1/openapi.json\n`);
  if (!service.demo) process.stdout.write(`  Console: ${service.baseUrl}/settings\n`);
  if (service.demo) {
    const { apiKey, adminEmail, adminPassword, clientId } = service.demo;
    process.stdout.write(
      `  Demo organization API key (every scope; shown this once, stored only as a hash):\n    ${apiKey}\n` +
        `  Demo admin sign-in (shown this once): ${adminEmail} / ${adminPassword}\n` +
        `  Console (sign in as the demo admin): ${service.baseUrl}/settings\n` +
        `  Demo OAuth client (public, PKCE, redirect http://127.0.0.1:<any port>/callback): ${clientId}\n` +
        `  Discovery: ${service.baseUrl}/.well-known/openid-configuration\n`,
    );
  }
  process.stdout.write(`  Pass delivery: ${service.delivery}; npx guestpass outbox list shows the latest\n`);
  process.stdout.write(`  Doors: MQTT ${service.doorPath.mqttUrl}; scan a QR value with npx guestpass door scan --facility ID --qr VALUE\n`);
  process.stdout.write('  Operator CLI: npx guestpass --help\n\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error: unknown) => {
    console.error(`guestpass: ${describeStartupError(error)}`);
    process.exit(1);
  });
}
