// The real stack in-process, for end-to-end suites: a fresh database, migrations, the PostgreSQL
// event store, the projection runner, and both HTTP apps behind the embedded gateway on an
// ephemeral port. Seed helpers go through the real command use cases, so every row a test sees
// was made by events and projections, exactly as in production.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes, randomUUID } from 'node:crypto';
import { migratedDatabase } from './database.js';
import { createKnex, type Knex } from '../../shared/db/knex.js';
import { migrateToLatest } from '../../shared/db/migrate.js';
import { createEventStore } from '../../shared/event-store/create-event-store.js';
import { CommandHandler, type CommandContext } from '../../shared/event-store/command-handler.js';
import type { EventStore } from '../../shared/event-store/event-store.js';
import { eventSchemas } from '../../shared/domain/event-schemas.js';
import { ORG_SCOPES } from '../../shared/domain/events.js';
import { PostgresIdAllocator, SERVICE_ID_BLOCKS } from '../../shared/domain/postgres-id-allocator.js';
import { PostgresSubjectKeyStore } from '../../shared/crypto/postgres-subject-key-store.js';
import { loadContactHasher } from '../../shared/crypto/postgres-contact-search-key.js';
import { testDataKeyRing } from './data-kek.js';
import { createLogger, type Logger } from '../../shared/logger.js';
import { mountGateway } from '../../shared/http/gateway.js';
import { ORG_API_RATE_LIMIT, RateLimiter, type RateLimitPolicy } from '../../shared/http/rate-limit.js';
import { memoryRateLimitStore, type RateLimitStore } from '../../shared/http/rate-limit-store.js';
import { ProjectionRunner } from '../../projections/runner.js';
import { PostgresReadModelWatermark } from '../../projections/watermark.js';
import type { CommandDeps } from '../../command-service/command-deps.js';
import { createCommandApp } from '../../command-service/app.js';
import { createQueryApp } from '../../query-service/app.js';
import { createOrganization } from '../../command-service/organizations/create-organization.js';
import { addFacility } from '../../command-service/facilities/add-facility.js';
import { suspendFacility, deactivateFacility } from '../../command-service/facilities/change-facility-status.js';
import { addUser } from '../../command-service/users/add-user.js';
import { createApiKey } from '../../command-service/api-keys/create-api-key.js';
import { revokeApiKey } from '../../command-service/api-keys/revoke-api-key.js';
import { registerClient, type RegisterClientInput } from '../../command-service/oauth-clients/register-client.js';
import { OAUTH_SCOPES } from '../../shared/oauth/scopes.js';
import { USER_API_RATE_LIMIT } from '../../shared/auth/access-token-auth.js';
import { createOAuthServices, type FederationConfig, type OAuthServices } from '../../shared/oauth/oauth-services.js';
import type { MailSender, SmsSender } from '../../shared/delivery/delivery-ports.js';
import { PostgresDeliveryOutcomes } from '../../shared/delivery/delivery-outcomes.js';
import { startPassDelivery } from '../../projections/pass-delivery.js';

/** One key-encryption key for every test stack (a test KEK, never used outside tests). */
const STACK_KEK = Buffer.alloc(32, 7);

export interface ServeOptions {
  /** Overrides of the organization API rate limit (tests default to a limit they never reach). */
  readonly rateLimit?: Partial<RateLimitPolicy>;
  /** Overrides of the user-delegated API's per-user limit (default: one the tests never reach). */
  readonly userRateLimit?: Partial<RateLimitPolicy>;
  /** Overrides of the protocol endpoints' per-address failure budgets (default: the shipped ones). */
  readonly failureLimit?: Partial<RateLimitPolicy>;
  /** OAUTH_CLIENT_RATE_LIMIT (default: the shipped one). */
  readonly oauthClientRateLimit?: number;
  /**
   * The issuer (default: this gateway's own address); another gateway of the same deployment
   * shares it. A function gets the gateway's address first (a browser test of passkeys needs
   * `localhost` there: WebAuthn refuses an IP address as the relying party).
   */
  readonly issuer?: string | ((baseUrl: string) => string);
  readonly trustProxy?: boolean;
  /** Signs page cursors (default: a random key per gateway). */
  readonly pageCursorSecret?: string;
  /** Where this gateway's rate limits count (default: its own memory, one store for both apps). */
  readonly rateLimitStore?: RateLimitStore;
  /**
   * An upstream OpenID Provider for federated sign-in; a function gets this gateway's base URL
   * first (to register the callback at the upstream before the apps are built).
   */
  readonly federation?: FederationConfig | null | ((baseUrl: string) => Promise<FederationConfig>);
}

export interface StackOptions extends ServeOptions {
  readonly label?: string;
  /** An empty database of the test's own server (migrated here) instead of a fresh one on the run's server. */
  readonly databaseUrl?: string;
  /** Default: LOG_LEVEL, else silent. */
  readonly logLevel?: string;
  /** A logger of the test's own (to capture lines); overrides logLevel. */
  readonly logger?: Logger;
  readonly projectionWaitMs?: number;
  /** Runs pass delivery over these channels (default: none runs, and creates wait for nothing). */
  readonly delivery?: {
    readonly mail: MailSender;
    readonly sms: SmsSender;
    readonly mailFrom?: string;
    /** DELIVERY_WAIT_MS (default 5000). */
    readonly waitMs?: number;
    /** How often the worker looks at the work list (default 1000 ms). */
    readonly pollIntervalMs?: number;
  };
}

export interface Tenant {
  readonly orgId: number;
  readonly facilityId: number;
  /** The admin the API key acts for. */
  readonly userId: number;
  readonly keyId: string;
  readonly apiKey: string;
}

export interface ApiResponse<T = any> {
  readonly status: number;
  readonly headers: Headers;
  readonly body: T;
  /** The raw text of the body. */
  readonly text: string;
}

export interface RequestOptions {
  /** Sent as `Authorization: Bearer`. */
  readonly apiKey?: string;
  /** Serialised as JSON with Content-Type application/json. */
  readonly json?: unknown;
  /** Sent as is (with `headers` choosing the type). */
  readonly raw?: string | Buffer;
  readonly headers?: Record<string, string>;
}

export interface Server {
  readonly baseUrl: string;
  /** The authorization server's ports of this gateway (its issuer is `baseUrl`). */
  readonly oauth: OAuthServices;
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<ApiResponse<T>>;
  close(): Promise<void>;
}

export interface Stack extends Server {
  readonly databaseUrl: string;
  readonly db: Knex;
  readonly store: EventStore;
  readonly deps: CommandDeps;
  readonly logger: Logger;
  readonly seed: {
    organization(options?: { name?: string; inviteAllowance?: number }): Promise<number>;
    facility(orgId: number, options?: { name?: string; description?: string | null }): Promise<number>;
    suspendFacility(facilityId: number): Promise<void>;
    deactivateFacility(facilityId: number): Promise<void>;
    admin(orgId: number, options?: { inviteAllowance?: number | null; email?: string }): Promise<number>;
    apiKey(
      orgId: number,
      userId: number,
      options?: { scopes?: readonly string[]; expiresAt?: Date | string | null; allowedIps?: readonly string[] },
    ): Promise<{ keyId: string; apiKey: string }>;
    revokeApiKey(keyId: string): Promise<void>;
    /** A user who signs in with a password (default roles: self_invite). */
    user(
      orgId: number,
      options?: { email?: string; password?: string | null; roles?: readonly string[]; firstName?: string; lastName?: string; inviteAllowance?: number | null },
    ): Promise<{ userId: number; email: string; password: string | null }>;
    /** An OAuth client; a confidential one comes with its secret. Default: public, every scope. */
    client(orgId: number, options?: Partial<RegisterClientInput>): Promise<{ clientId: string; clientSecret: string | null; redirectUri: string }>;
    /** Organization + facility + admin + API key with every scope (unless `scopes` says otherwise). */
    tenant(options?: { inviteAllowance?: number; scopes?: readonly string[]; name?: string }): Promise<Tenant>;
  };
  /** Another gateway over the same database and ports, with its own options (rate limit, proxy trust). */
  serve(options?: ServeOptions): Promise<Server>;
  stop(): Promise<void>;
}

const UNREACHABLE_LIMIT: Partial<RateLimitPolicy> = { points: 1_000_000, abuseThreshold: 1_000_000 };

function operator(): CommandContext {
  return { correlationId: randomUUID(), causationId: null, actor: { kind: 'operator' }, now: new Date() };
}

async function listen(): Promise<{ server: http.Server; baseUrl: string }> {
  const server = http.createServer();
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

export function requester(baseUrl: string) {
  return async function request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.apiKey !== undefined) headers.Authorization = `Bearer ${options.apiKey}`;
    let body: string | Buffer | undefined = options.raw;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers['Content-Type'] ??= 'application/json';
    }
    const res = await fetch(baseUrl + path, { method, headers, body });
    const text = await res.text();
    const isJson = (res.headers.get('content-type') ?? '').includes('json');
    return { status: res.status, headers: res.headers, body: (isJson && text ? JSON.parse(text) : text) as T, text };
  };
}

async function migrated(url: string): Promise<{ url: string; knex: Knex }> {
  const knex = createKnex(url, { max: 20 });
  await migrateToLatest(knex).catch(async (error: unknown) => {
    await knex.destroy();
    throw error;
  });
  return { url, knex };
}

export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const { url: databaseUrl, knex: db } = options.databaseUrl
    ? await migrated(options.databaseUrl)
    : await migratedDatabase(options.label ?? 'stack', { max: 20 });
  const logger = options.logger ?? createLogger(options.logLevel ?? process.env.LOG_LEVEL ?? 'silent', 'stack');
  const store = createEventStore({ databaseUrl, eventStoreUrl: null, schemas: eventSchemas });
  const subjectKeys = new PostgresSubjectKeyStore(db, testDataKeyRing());
  // The stored contact search key, as the runtime loads it: the projections and the query app hash alike.
  const contactHasher = await loadContactHasher(db, testDataKeyRing());
  const watermark = new PostgresReadModelWatermark(db, { logger });
  const runner = new ProjectionRunner(
    { knex: db, store, subjectKeys, contactHasher, logger },
    { onProgress: (p) => watermark.observe(p), onRowsChanged: (names) => watermark.observeRowsChanged(names) },
  );
  await runner.start();
  const deliveryOutcomes = options.delivery ? new PostgresDeliveryOutcomes(db, store, logger) : undefined;
  const deps: CommandDeps = {
    store,
    handler: new CommandHandler(store),
    ids: new PostgresIdAllocator(db, SERVICE_ID_BLOCKS),
    subjectKeys,
    db,
    watermark,
    readModelChanges: watermark,
    projectionWaitMs: options.projectionWaitMs ?? 5000,
    deliveryOutcomes,
    deliveryWaitMs: options.delivery?.waitMs ?? 5000,
    // The member import (CLI and console) matches rows by their keyed email hash.
    contactHasher,
  };

  const servers = new Set<http.Server>();
  const oauthServices = new Set<OAuthServices>();
  async function serve(serveOptions: ServeOptions = {}): Promise<Server> {
    const config = {
      trustProxy: serveOptions.trustProxy ?? false,
      pageCursorSecret: serveOptions.pageCursorSecret ?? randomBytes(32).toString('hex'),
      oauthClientRateLimit: serveOptions.oauthClientRateLimit,
    };
    // One store and one limiter for both apps: the organization API is one bucket, as in the embedded runner.
    const rateLimitStore = serveOptions.rateLimitStore ?? memoryRateLimitStore();
    const orgApiRateLimiter = new RateLimiter('org-api', { ...ORG_API_RATE_LIMIT, ...UNREACHABLE_LIMIT, ...serveOptions.rateLimit }, rateLimitStore);
    // Listen first: the issuer is the server's own address.
    const { server, baseUrl } = await listen();
    const federation = typeof serveOptions.federation === 'function' ? await serveOptions.federation(baseUrl) : (serveOptions.federation ?? null);
    const oauth = createOAuthServices(db, databaseUrl, { issuer: typeof serveOptions.issuer === 'function' ? serveOptions.issuer(baseUrl) : (serveOptions.issuer ?? baseUrl), kek: STACK_KEK, federation });
    oauthServices.add(oauth);
    const userApiRateLimiter = new RateLimiter('user-api', { ...USER_API_RATE_LIMIT, ...UNREACHABLE_LIMIT, ...serveOptions.userRateLimit }, rateLimitStore);
    const commandApp = createCommandApp({ ...deps, logger, config, rateLimitStore, orgApiRateLimiter, userApiRateLimiter, oauthFailureLimit: serveOptions.failureLimit, oauth });
    const queryApp = createQueryApp({ db, logger, config, rateLimitStore, orgApiRateLimiter, userApiRateLimiter, oauth, readModelChanges: watermark, subjectKeys, contactHasher });
    server.on('request', mountGateway(commandApp, queryApp));
    servers.add(server);
    return {
      baseUrl,
      oauth,
      request: requester(baseUrl),
      close: async () => {
        servers.delete(server);
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      },
    };
  }

  const main = await serve(options);
  const delivery = options.delivery
    ? await startPassDelivery({
        knex: db,
        store,
        handler: deps.handler,
        subjectKeys,
        senders: { mail: options.delivery.mail, sms: options.delivery.sms, mailFrom: options.delivery.mailFrom ?? 'Guest Pass <no-reply@example.test>' },
        baseUrl: main.baseUrl,
        logger,
        onRecorded: (batchId, report) => deliveryOutcomes?.observe(batchId, report),
        pollIntervalMs: options.delivery.pollIntervalMs,
      })
    : null;

  const seed: Stack['seed'] = {
    async organization(o = {}) {
      return (await createOrganization(deps, { name: o.name ?? `Org ${randomUUID().slice(0, 8)}`, inviteAllowance: o.inviteAllowance }, operator())).orgId;
    },
    async facility(orgId, o = {}) {
      return (await addFacility(deps, { orgId, name: o.name ?? 'Main entrance', description: o.description ?? null }, operator())).facilityId;
    },
    async suspendFacility(facilityId) {
      await suspendFacility(deps, { facilityId }, operator());
    },
    async deactivateFacility(facilityId) {
      await deactivateFacility(deps, { facilityId }, operator());
    },
    async admin(orgId, o = {}) {
      const email = o.email ?? `admin-${randomUUID().slice(0, 8)}@example.com`;
      return (
        await addUser(deps, { orgId, email, firstName: 'Ada', lastName: 'Admin', roles: ['admin'], inviteAllowance: o.inviteAllowance ?? null }, operator())
      ).userId;
    },
    async apiKey(orgId, userId, o = {}) {
      const { keyId, apiKey } = await createApiKey(
        deps,
        { orgId, userId, scopes: o.scopes ?? ORG_SCOPES, expiresAt: o.expiresAt ?? null, allowedIps: o.allowedIps ?? [] },
        operator(),
      );
      return { keyId, apiKey };
    },
    async revokeApiKey(keyId) {
      await revokeApiKey(deps, { keyId }, operator());
    },
    async user(orgId, o = {}) {
      const email = o.email ?? `user-${randomUUID().slice(0, 8)}@example.com`;
      const password = o.password === undefined ? `pw-${randomUUID()}` : o.password;
      const { userId } = await addUser(
        deps,
        {
          orgId,
          email,
          password,
          firstName: o.firstName ?? 'Uma',
          lastName: o.lastName ?? 'User',
          roles: o.roles ?? ['self_invite'],
          inviteAllowance: o.inviteAllowance ?? null,
        },
        operator(),
      );
      return { userId, email, password };
    },
    async client(orgId, o = {}) {
      const redirectUris = o.redirectUris ?? ['https://app.example.test/callback'];
      const { clientId, clientSecret } = await registerClient(
        deps,
        {
          orgId,
          name: o.name ?? 'Test App',
          clientType: o.clientType ?? 'public',
          redirectUris,
          postLogoutRedirectUris: o.postLogoutRedirectUris ?? ['https://app.example.test/signed-out'],
          allowedScopes: o.allowedScopes ?? [...OAUTH_SCOPES],
        },
        operator(),
      );
      return { clientId, clientSecret, redirectUri: redirectUris[0]! };
    },
    async tenant(o = {}) {
      const orgId = await seed.organization({ name: o.name, inviteAllowance: o.inviteAllowance ?? 100_000 });
      const [facilityId, userId] = await Promise.all([seed.facility(orgId), seed.admin(orgId)]);
      const { keyId, apiKey } = await seed.apiKey(orgId, userId, { scopes: o.scopes });
      return { orgId, facilityId, userId, keyId, apiKey };
    },
  };

  return {
    ...main,
    databaseUrl,
    db,
    store,
    deps,
    logger,
    seed,
    serve,
    async stop() {
      for (const server of servers) server.closeAllConnections();
      await Promise.all([...servers].map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
      await Promise.all([...oauthServices].map((o) => o.close()));
      await delivery?.stop();
      await deliveryOutcomes?.close();
      await runner.stop();
      await watermark.close();
      await store.close();
      await db.destroy();
    },
  };
}

/** A create-pass body that passes validation; override any field. */
export function passBody(facilityId: number, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const tomorrow = new Date(Date.now() + 24 * 60 * 60 * 1000).toISOString().slice(0, 10);
  return { first_name: 'Grace', last_name: 'Hopper', email: 'grace@example.com', arrival_date: tomorrow, facility_id: facilityId, ...overrides };
}
