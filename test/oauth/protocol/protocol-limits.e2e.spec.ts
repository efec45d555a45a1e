// Limits that protect without becoming the outage (issue 23), at the shipped limits, with the
// counters in the shared PostgreSQL and in Redis, as the services count them:
//  * correct requests from one address are never refused: a resource server introspecting 150
//    valid tokens a second for 75 s, a backend refreshing 20 tokens a second for 70 s;
//  * failures are: 1,300 wrong-secret introspections in a minute are refused and climb the
//    escalating lockouts; 700 invalid refresh tokens in a minute are refused;
//  * the organization API still refuses the 301st request of a minute from one address;
//  * `npx guestpass limits clear` lifts a lockout at once on every instance, and says who did it.
// Each run speaks from addresses of its own (a trusted X-Forwarded-For in 198.18.0.0/15), so runs
// sharing one Redis do not meet, and clears what it counted there when it ends.
import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { mkdtemp, rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { Agent, fetch as undiciFetch } from 'undici';
import { main, type Io } from '../../../cli/guestpass.js';
import { createKnex, type Knex } from '../../../shared/db/knex.js';
import { ORG_API_RATE_LIMIT } from '../../../shared/http/rate-limit.js';
import { postgresRateLimitAdmin, redisRateLimitAdmin, type RateLimitAdmin } from '../../../shared/http/rate-limit-admin.js';
import { postgresRateLimitStore, redisRateLimitStore, type RateLimitStore } from '../../../shared/http/rate-limit-store.js';
import { capturedLogger } from '../../support/captured-logs.js';
import { requireComponent, tcpReachable } from '../../support/components.js';
import { freshDatabase } from '../../support/database.js';
import type { ApiResponse, Server, Stack } from '../../support/stack.js';
import { APPS_AND_BACKEND, basic, formBody, issueCode, startProtocolStack, type TestClient, type TestUser } from './protocol-support.js';

const REDIS_URL = process.env.REDIS_URL?.trim() || 'redis://127.0.0.1:6379';
/**
 * The counters' answers are waited for as long as it takes: these tests are about what is counted,
 * not about the in-memory insurance that answers when a busy machine makes the store slow
 * (shared-rate-limits.int.spec.ts tests that).
 */
const STORE_TIMEOUT_MS = 30_000;

/**
 * The load's own connection pool: a bounded number of kept-alive connections, requests queued
 * behind them, so that a paced load on a busy machine waits instead of opening a socket per
 * request and timing out connecting.
 */
const loadAgent = () => new Agent({ connections: 16, connect: { timeout: 60_000 }, headersTimeout: 120_000, bodyTimeout: 120_000 });

async function send(agent: Agent, server: Server, method: string, route: string, options: { raw?: string; headers?: Record<string, string> }): Promise<ApiResponse> {
  const res = await undiciFetch(server.baseUrl + route, { method, headers: options.headers, body: options.raw, dispatcher: agent });
  const text = await res.text();
  const isJson = (res.headers.get('content-type') ?? '').includes('json');
  return { status: res.status, headers: res.headers as unknown as Headers, body: isJson && text ? JSON.parse(text) : text, text };
}

/** Runs `npx guestpass` in-process against the counters' database (and Redis), capturing what it prints. */
function cli(env: NodeJS.ProcessEnv) {
  return async (...argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const io: Io = { out: (l) => out.push(l), err: (l) => err.push(l) };
    const code = await main(argv, io, { LOG_LEVEL: 'silent', ...env });
    return { code, out, err, json: () => JSON.parse(out.at(-1) ?? 'null') as Record<string, any> };
  };
}

/** Sends `count` requests, `concurrency` at a time; the answers in the order sent. */
async function burst(count: number, concurrency: number, send: (i: number) => Promise<ApiResponse>): Promise<ApiResponse[]> {
  const answers: ApiResponse[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        answers[i] = await send(i);
      }
    }),
  );
  return answers;
}

/** Calls `send` `perSecond` times a second, evenly in 100 ms ticks, for `seconds`; all the answers. */
async function paced(perSecond: number, seconds: number, send: (i: number) => Promise<ApiResponse>): Promise<ApiResponse[]> {
  const perTick = perSecond / 10;
  const started = Date.now();
  const sent: Promise<ApiResponse>[] = [];
  for (let tick = 0; tick < seconds * 10; tick++) {
    for (let j = 0; j < perTick; j++) sent.push(send(sent.length));
    await sleep(Math.max(0, started + (tick + 1) * 100 - Date.now()));
  }
  return Promise.all(sent);
}

const statusCounts = (answers: readonly ApiResponse[]) => answers.reduce<Record<number, number>>((n, r) => ({ ...n, [r.status]: (n[r.status] ?? 0) + 1 }), {});

for (const backend of ['PostgreSQL', 'Redis'] as const) {
  describe(`OAuth protocol limits at the shipped values (${backend} counters)`, function () {
    this.timeout(300_000);
    let stack: Stack;
    let user: TestUser;
    let backendClient: TestClient;
    let countersUrl: string;
    let dataDir: string;
    let guestpass: ReturnType<typeof cli>;
    let admin: RateLimitAdmin;
    const pools: Knex[] = [];
    const redisClients: Redis[] = [];
    const servers: Server[] = [];
    const agent = loadAgent();
    /** (policy, key) pairs this run counted, cleared from the shared store at the end. */
    const counted = new Set<string>();
    // An address block of this run's own: 198.18.{net}.{host}.
    const net = 1 + Math.floor(Math.random() * 250);
    let hosts = 0;
    const newAddress = () => `198.18.${net}.${++hosts}`;

    const instanceStore = async (): Promise<RateLimitStore> => {
      const log = capturedLogger().logger;
      if (backend === 'Redis') {
        const client = new Redis(REDIS_URL, { enableOfflineQueue: false });
        redisClients.push(client);
        await new Promise((resolve) => client.once('ready', resolve));
        return redisRateLimitStore(client, { log, timeoutMs: STORE_TIMEOUT_MS });
      }
      const pool = createKnex(countersUrl, { max: 6 });
      pools.push(pool);
      return postgresRateLimitStore(pool, { log, timeoutMs: STORE_TIMEOUT_MS });
    };
    /** One instance of the services: its own connections to the shared counters, the stack's issuer. */
    const instance = async (options: Parameters<Stack['serve']>[0] = {}) => {
      const server = await stack.serve({ issuer: stack.baseUrl, trustProxy: true, ...options, rateLimitStore: await instanceStore() });
      servers.push(server);
      return server;
    };

    const post = (server: Server, route: string, fields: Record<string, string>, from: string, headers: Record<string, string> = {}) =>
      send(agent, server, 'POST', route, { raw: formBody(fields), headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Forwarded-For': from, ...headers } });
    const introspect = (server: Server, from: string, token: string, secret = backendClient.clientSecret!) =>
      post(server, '/api/oauth/introspect', { token }, from, basic(backendClient.clientId, secret));
    const refresh = (server: Server, from: string, refreshToken: string) =>
      post(server, '/api/oauth/token', { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: backendClient.clientId, client_secret: backendClient.clientSecret! }, from);
    const tokensOf = async (server: Server, from: string) => {
      const issued = await issueCode(stack, backendClient, user);
      const res = await post(
        server,
        '/api/oauth/token',
        { grant_type: 'authorization_code', code: issued.code, redirect_uri: issued.redirectUri, code_verifier: issued.verifier, client_id: backendClient.clientId, client_secret: backendClient.clientSecret! },
        from,
      );
      expect(res.status, res.text).to.equal(200);
      return res.body as { access_token: string; refresh_token: string };
    };

    before(async function () {
      if (backend === 'Redis') {
        const { hostname, port } = new URL(REDIS_URL);
        requireComponent(this, 'Redis', await tcpReachable(hostname, Number(port) || 6379), `REDIS_URL=${REDIS_URL}`);
      }
      ({ stack, user, clients: { backend: backendClient } } = await startProtocolStack('protocol_limits', APPS_AND_BACKEND));
      // The counters (and the CLI's event log) in a database of their own, migrated by the CLI.
      countersUrl = await freshDatabase('limits_counters');
      dataDir = await mkdtemp(path.join(os.tmpdir(), 'guestpass-limits-'));
      guestpass = cli({ DATABASE_URL: countersUrl, GUESTPASS_DATA_DIR: dataDir, ...(backend === 'Redis' ? { REDIS_URL } : {}) });
      const first = await guestpass('limits', 'list', '--json');
      expect(first.code, first.err.join('\n')).to.equal(0);
      if (backend === 'Redis') {
        const client = new Redis(REDIS_URL);
        redisClients.push(client);
        admin = redisRateLimitAdmin(client);
      } else {
        const pool = createKnex(countersUrl, { max: 2 });
        pools.push(pool);
        admin = postgresRateLimitAdmin(pool);
      }
    });
    after(async () => {
      await agent.close();
      await Promise.all(servers.map((s) => s.close()));
      for (const pair of counted) {
        const [policy, key] = JSON.parse(pair) as [string, string];
        await admin?.clear(policy, key);
      }
      for (const client of redisClients) client.disconnect();
      await Promise.all(pools.map((p) => p.destroy()));
      await stack?.stop();
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
    });
    const counts = (policy: string, key: string) => counted.add(JSON.stringify([policy, key]));

    it('never refuses an address that introspects 150 valid tokens a second for 75 s while refreshing 20 tokens a second for 70 s', async function () {
      // 75 s where the machine keeps up; a busy shared machine answers the same requests later.
      this.timeout(900_000);
      const server = await instance();
      const from = newAddress();
      for (const policy of ['oauth-introspect', 'oauth-token', 'oauth-introspect-client', 'oauth-token-client']) counts(policy, from);
      counts('oauth-introspect-client', backendClient.clientId);
      counts('oauth-token-client', backendClient.clientId);
      const accessTokens = await Promise.all(Array.from({ length: 16 }, async () => (await tokensOf(server, from)).access_token));
      // 20 rotation chains, each refreshed once a second: its next refresh uses the token the last one gave.
      const chains = await Promise.all(Array.from({ length: 20 }, async () => (await tokensOf(server, from)).refresh_token));
      const inFlight: Array<Promise<unknown> | null> = chains.map(() => null);
      const refreshOnce = (chain: number) => {
        const run = (async () => {
          await inFlight[chain];
          const res = await refresh(server, from, chains[chain]!);
          if (res.status === 200) chains[chain] = (res.body as { refresh_token: string }).refresh_token;
          return res;
        })();
        inFlight[chain] = run;
        return run;
      };

      const [introspections, refreshes] = await Promise.all([
        paced(150, 75, (i) => introspect(server, from, accessTokens[i % accessTokens.length]!)),
        paced(20, 70, (i) => refreshOnce(i % chains.length)),
      ]);
      expect(introspections).to.have.length(150 * 75);
      expect(statusCounts(introspections)).to.deep.equal({ 200: 150 * 75 });
      expect(introspections.every((r) => r.body.active === true), 'every token introspected active').to.equal(true);
      expect(refreshes).to.have.length(20 * 70);
      expect(statusCounts(refreshes)).to.deep.equal({ 200: 20 * 70 });
    });

    it('refuses 1,300 wrong-secret introspections from one address within a minute with 429, and climbs the lockouts while it keeps on', async () => {
      const server = await instance();
      const from = newAddress();
      const elsewhere = newAddress();
      counts('oauth-introspect', from);
      counts('oauth-introspect', elsewhere);
      const { access_token: token } = await tokensOf(server, elsewhere);
      const wrong = () => introspect(server, from, token, 'not-the-secret');

      const started = Date.now();
      const first = await burst(1300, 20, wrong);
      expect(Date.now() - started, 'the 1,300 were sent within a minute').to.be.below(60_000);
      const firstCounts = statusCounts(first);
      expect(Object.keys(firstCounts).sort()).to.deep.equal(['401', '429']);
      // Taken before the check: however many at once, no more than the budget (1,200) are checked.
      expect(firstCounts[401]).to.be.at.most(1200);
      expect(first.filter((r) => r.status === 429).some((r) => r.body.retry_after >= 899 && r.body.retry_after <= 900), 'a 15-minute lockout').to.equal(true);
      expect((await admin.lockout('oauth-introspect', from))?.level).to.equal(1);
      // A correct request from the locked-out address is refused too; another address is served.
      expect((await introspect(server, from, token)).status).to.equal(429);
      const served = await introspect(server, elsewhere, token);
      expect([served.status, served.body.active]).to.deep.equal([200, true]);

      // Ignoring the Retry-After: a further window's worth of refusals climbs to the second level (1 h).
      const second = await burst(1300, 20, wrong);
      expect(statusCounts(second)).to.deep.equal({ 429: 1300 });
      expect(second.some((r) => r.body.retry_after >= 3599 && r.body.retry_after <= 3600), 'a 1-hour lockout').to.equal(true);
      const lockout = await admin.lockout('oauth-introspect', from);
      expect(lockout?.level).to.equal(2);
      expect(lockout!.until.getTime() - Date.now()).to.be.within(3_500_000, 3_600_000);
    });

    it('refuses 700 invalid refresh tokens from one address within a minute with 429', async () => {
      const server = await instance();
      const from = newAddress();
      counts('oauth-token', from);
      counts('oauth-token-client', backendClient.clientId);
      const started = Date.now();
      const answers = await burst(700, 10, (i) => refresh(server, from, `rt_not-a-refresh-token-${i}`));
      expect(Date.now() - started).to.be.below(60_000);
      const n = statusCounts(answers);
      expect(Object.keys(n).sort()).to.deep.equal(['400', '429']);
      expect(n[400]).to.be.at.most(600);
      expect(n[429]).to.be.at.least(100);
      expect(answers.find((r) => r.status === 429)!.body).to.include({ error: 'temporarily_unavailable' });
    });

    it('the organization API refuses the 301st request of a minute from one address, across two instances', async () => {
      const [a, b] = [await instance({ rateLimit: ORG_API_RATE_LIMIT }), await instance({ rateLimit: ORG_API_RATE_LIMIT })];
      const from = newAddress();
      counts('org-api', from);
      const tenant = await stack.seed.tenant();
      const read = (server: Server) => send(agent, server, 'GET', '/api/v1/org/facilities', { headers: { Authorization: `Bearer ${tenant.apiKey}`, 'X-Forwarded-For': from } });
      const answers = await burst(300, 10, (i) => read(i % 2 === 0 ? a : b));
      expect(statusCounts(answers)).to.deep.equal({ 200: 300 });
      const over = await read(b);
      expect(over.status).to.equal(429);
      expect(over.headers.get('ratelimit-policy')).to.equal('"org-api";q=300;w=60');
    });

    it('`limits list` shows a lockout and `limits clear` lifts it at once on both instances, recorded with who did it', async () => {
      // A small failure budget (the policy's name is the shipped one), so the lockout takes 6 tries.
      const failureLimit = { points: 5, abuseThreshold: 5 };
      const [a, b] = [await instance({ failureLimit }), await instance({ failureLimit })];
      const from = newAddress();
      counts('oauth-introspect', from);
      const { access_token: token } = await tokensOf(a, newAddress());
      for (let i = 0; i < 6; i++) await introspect(a, from, token, 'not-the-secret');
      const refused = await introspect(b, from, token);
      expect([refused.status, refused.body.retry_after]).to.deep.equal([429, 900]);

      const listed = await guestpass('limits', 'list', '--json');
      expect(listed.code, listed.err.join('\n')).to.equal(0);
      const mine = (listed.json().lockouts as Array<Record<string, unknown>>).find((l) => l.key === from);
      expect(mine).to.include({ policy: 'oauth-introspect', key: from, level: 1 });
      expect(Date.parse(mine!.until as string) - Date.now()).to.be.within(890_000, 900_000);
      const text = await guestpass('limits', 'list');
      expect(text.out.join('\n')).to.match(new RegExp(`oauth-introspect\\t${from.replace(/\./g, '\\.')}\\t1\\t`));

      const cleared = await guestpass('limits', 'clear', '--policy', 'oauth-introspect', '--key', from, '--by', 'ops-alice', '--json');
      expect(cleared.code, cleared.err.join('\n')).to.equal(0);
      expect(cleared.json().lifted).to.include({ policy: 'oauth-introspect', key: from, level: 1 });
      for (const server of [a, b]) {
        const res = await introspect(server, from, token);
        expect([res.status, res.body.active]).to.deep.equal([200, true]);
      }
      expect(await admin.lockout('oauth-introspect', from)).to.equal(null);
      // The window's count went with it: the whole budget of failures is there again.
      const again = await burst(5, 1, () => introspect(a, from, token, 'not-the-secret'));
      expect(statusCounts(again)).to.deep.equal({ 401: 5 });
      const relocked = await introspect(b, from, token, 'not-the-secret');
      // The level went too: the next lockout is the first level again.
      expect([relocked.status, relocked.body.retry_after]).to.deep.equal([429, 900]);

      const exported = await guestpass('events', 'export', '--stream', 'rate-limit-lockouts');
      const events = exported.out.map((l) => JSON.parse(l) as { type: string; data: Record<string, unknown>; metadata: { actor: unknown } });
      expect(events).to.have.length(1);
      expect(events[0]).to.deep.include({
        type: 'RateLimitLockoutCleared',
        data: { policy: 'oauth-introspect', keySha256: createHash('sha256').update(from).digest('hex'), level: 1, clearedBy: 'ops-alice' },
      });
      expect(events[0]!.metadata.actor).to.deep.equal({ kind: 'operator' });
      expect(exported.out.join('\n'), 'the address is not in the log').to.not.include(from);
    });
  });
}
