// The guest-pass service under test, in a child process of bench/oauth-vs-oidc-provider.ts.
//
// startStack() gives the real stack (fresh migrated database on DATABASE_URL's server or an
// embedded one, PostgreSQL event store, projection runner, OAuth services). The bench drives
// the OAuth protocol routes on a listener of their own, composed as createCommandApp composes
// them (the service app's front middleware, then oauthProtocolRoutes), at the shipped limits:
// every request of the bench comes from 127.0.0.1, and correct ones cost that address nothing
// (its budget counts failures; the points its requests hold while checked stay with the instance
// for the next ones), while each client's budget is OAUTH_CLIENT_RATE_LIMIT's default, counted in
// the instance's memory as the services count it.
//
// Authorization codes are made as the authorize endpoint makes them, by issueAuthorizationCode
// for a validated request and a signed-in session, one event append each.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { startStack, type Stack } from '../../test/support/stack.js';
import { stopTestDatabases, databaseKind } from '../../test/support/database.js';
import { createServiceApp } from '../../shared/http/service-app.js';
import type { HttpState } from '../../shared/http/http-state.js';
import type Koa from 'koa';
import { OAUTH_PATHS } from '../../shared/oauth/discovery.js';
import { s256Challenge } from '../../shared/oauth/pkce.js';
import type { AuthorizeRequest } from '../../shared/oauth/authorize-request.js';
import type { SignInSession } from '../../shared/oauth/authorize-interaction.js';
import type { CommandContext } from '../../shared/event-store/command-handler.js';
import { issueAuthorizationCode } from '../../command-service/oauth/issue-code.js';
import { oauthProtocolRoutes } from '../../command-service/oauth/oauth-routes.js';
import { DEFAULT_CLIENT_REQUESTS_PER_SECOND, INTROSPECT_FAILURE_LIMIT, TOKEN_ENDPOINT_FAILURE_LIMIT } from '../../command-service/oauth/protocol-rate-limits.js';
import { postgresRateLimitStore } from '../../shared/http/rate-limit-store.js';
import type { CommandAppDeps } from '../../command-service/command-app-deps.js';
import { inParallel, newSid, newVerifier, type BenchClient, type ClientKind, type IssuedCode, type ServerInfo } from './protocol.js';
import { serveRpc } from './rpc.js';
import { startCpuProfile } from '../cpu-profile.js';

const REDIRECT_URI = 'https://bench.example.test/callback';
const SCOPES = ['openid', 'offline_access'] as const;
/** Codes are appended this many at a time (the stack's pool has 20 connections). */
const CREATE_PARALLELISM = 16;

let stack: Stack | null = null;
let server: http.Server | null = null;
let user: { userId: number; orgId: number } | null = null;
let stopProfile: (() => Promise<void>) | null = null;
const clients = new Map<ClientKind, BenchClient>();

function benchContext(): CommandContext {
  return { correlationId: randomUUID(), causationId: null, actor: { kind: 'system', name: 'bench' }, now: new Date() };
}

async function listen(app: Koa<HttpState>): Promise<{ server: http.Server; baseUrl: string }> {
  const listener = http.createServer(app.callback());
  // Idle gaps between phases (codes being made) must not close the generator's keep-alive sockets.
  listener.keepAliveTimeout = 120_000;
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  return { server: listener, baseUrl: `http://127.0.0.1:${(listener.address() as AddressInfo).port}` };
}

serveRpc({
  async start(): Promise<ServerInfo> {
    stack = await startStack({ label: 'bench_oauth', logLevel: process.env.LOG_LEVEL ?? 'silent' });
    const tenant = await stack.seed.tenant();
    const { userId } = await stack.seed.user(tenant.orgId);
    user = { userId, orgId: tenant.orgId };
    for (const clientType of ['public', 'confidential'] as const) {
      const registered = await stack.seed.client(tenant.orgId, { clientType, redirectUris: [REDIRECT_URI], allowedScopes: [...SCOPES] });
      clients.set(clientType, { clientId: registered.clientId, clientSecret: registered.clientSecret, redirectUri: registered.redirectUri });
    }
    await stack.oauth.signingKeys.current(); // the first token must not pay for the key's generation

    const deps: CommandAppDeps = { ...stack.deps, logger: stack.logger, config: { trustProxy: false }, oauth: stack.oauth };
    // Counted where the services count them: PostgreSQL (the stack's database), at the shipped limits.
    const rateLimitStore = postgresRateLimitStore(stack.deps.db, { log: stack.logger });
    const app = createServiceApp({ logger: stack.logger, trustProxy: false, rateLimitStore });
    app.use(oauthProtocolRoutes({ ...deps, rateLimitStore }, { trustProxy: false }).routes());
    const listening = await listen(app);
    server = listening.server;
    return {
      name: 'guestpass',
      baseUrl: listening.baseUrl,
      tokenPath: OAUTH_PATHS.token,
      introspectPath: OAUTH_PATHS.introspect,
      clients: { public: clients.get('public')!, confidential: clients.get('confidential')! },
      storage: `PostgreSQL event store (${databaseKind()} server), every code, redemption and rotation an fsync'd append`,
      introspects: 'RS256 JWT access tokens (signature verified, then the token family read from its stream)',
      introspectionVerifies: true,
      pid: process.pid,
      limits:
        `the shipped limits: per address ${TOKEN_ENDPOINT_FAILURE_LIMIT.points} failures/min at token, ` +
        `${INTROSPECT_FAILURE_LIMIT.points} at introspect, counted in PostgreSQL (correct requests give their point back; ` +
        `held by the instance for the address's next ones meanwhile); per client ${DEFAULT_CLIENT_REQUESTS_PER_SECOND.toLocaleString('en')} ` +
        `requests/s per endpoint (OAUTH_CLIENT_RATE_LIMIT's default), counted per instance in memory`,
    };
  },

  async createCodes({ client: kind, count }: { client: ClientKind; count: number }): Promise<IssuedCode[]> {
    const benchClient = clients.get(kind)!;
    const client = await stack!.oauth.clients.findClient(benchClient.clientId);
    if (!client) throw new Error(`client ${benchClient.clientId} is not in the client registry`);
    const authTime = new Date().toISOString();
    return inParallel(count, CREATE_PARALLELISM, async () => {
      const verifier = newVerifier();
      const request: AuthorizeRequest = {
        client,
        redirectUri: benchClient.redirectUri,
        scopes: [...SCOPES],
        state: null,
        codeChallenge: s256Challenge(verifier),
        codeChallengeMethod: 'S256',
        nonce: newSid(),
        prompt: new Set(),
        maxAge: null,
        loginHint: null,
        idTokenHint: null,
      };
      const session: SignInSession = { userId: user!.userId, orgId: user!.orgId, authTime, amr: ['pwd'], sid: newSid() };
      const { code } = await issueAuthorizationCode(stack!.deps, { request, session }, benchContext());
      return { code, verifier };
    });
  },

  async settle(): Promise<void> {
    const head = await stack!.store.headPosition();
    if (!(await stack!.deps.watermark.waitFor(head, 60_000))) throw new Error('the projections did not catch up within 60 s');
  },

  async startProfile({ file }: { file: string }): Promise<void> {
    stopProfile = await startCpuProfile(file);
  },

  async stopProfile(): Promise<void> {
    await stopProfile?.();
    stopProfile = null;
  },

  async cpu(): Promise<number> {
    const { user: u, system } = process.cpuUsage();
    return u + system;
  },

  async postgresPids(): Promise<number[]> {
    // Other databases on the same server (other suites) are not ours: their backends are left out.
    const { rows } = (await stack!.db.raw(
      `SELECT pid FROM pg_stat_activity
        WHERE datname = current_database() OR backend_type IN ('walwriter', 'checkpointer', 'background writer')`,
    )) as { rows: { pid: number }[] };
    return rows.map((r) => r.pid);
  },

  async stop(): Promise<void> {
    if (server) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server!.close(() => resolve()));
    }
    await stack?.stop();
    await stopTestDatabases();
    setImmediate(() => process.exit(0));
  },
});
