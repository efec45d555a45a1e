// Rate limits counted in a shared store (rate-limit-store.ts), PostgreSQL and Redis alike: two
// instances of the services allow the spec's 300 organization API requests per minute per source
// together, not 600; a lockout outlives the instance that imposed it; and when the counters' store
// does not answer, the requests are still served (in-memory insurance), with a warning.
import { expect } from 'chai';
import { createKnex, type Knex } from '../../shared/db/knex.js';
import { RateLimitedError } from '../../shared/errors.js';
import { ORG_API_RATE_LIMIT, RateLimiter } from '../../shared/http/rate-limit.js';
import { Redis } from 'ioredis';
import { postgresRateLimitStore, redisRateLimitStore, type RateLimitStore } from '../../shared/http/rate-limit-store.js';
import { startStack, type Server, type Stack, type Tenant } from '../support/stack.js';
import { capturedLogger } from '../support/captured-logs.js';
import { requireComponent, tcpReachable } from '../support/components.js';

const REDIS_URL = process.env.REDIS_URL?.trim() || 'redis://127.0.0.1:6379';

for (const backend of ['PostgreSQL', 'Redis'] as const) {

describe(`rate limits shared by every instance (${backend} counters)`, function () {
  this.timeout(120_000);
  let stack: Stack;
  let tenant: Tenant;
  const pools: Knex[] = [];
  const clients: Redis[] = [];
  // Redis is one server for every run: each run's keys are its own.
  const run = `t${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  /** An instance's own store over its own connections, as each process has. */
  const instanceStore = async (): Promise<RateLimitStore> => {
    const log = capturedLogger().logger;
    if (backend === 'Redis') {
      const client = new Redis(REDIS_URL, { enableOfflineQueue: false, keyPrefix: `${run}:` });
      clients.push(client);
      await new Promise((resolve) => client.once('ready', resolve));
      return redisRateLimitStore(client, { log });
    }
    const pool = createKnex(stack.databaseUrl, { max: 4 });
    pools.push(pool);
    return postgresRateLimitStore(pool, { log });
  };
  const instance = async (options: Parameters<Stack['serve']>[0] = {}) => stack.serve({ ...options, rateLimitStore: await instanceStore() });

  before(async function () {
    if (backend === 'Redis') {
      const { hostname, port } = new URL(REDIS_URL);
      requireComponent(this, 'Redis', await tcpReachable(hostname, Number(port) || 6379), `REDIS_URL=${REDIS_URL}`);
    }
    stack = await startStack({ label: 'shared_limits' });
    tenant = await stack.seed.tenant();
  });
  after(async () => {
    for (const client of clients) client.disconnect();
    await Promise.all(pools.map((p) => p.destroy()));
    await stack?.stop();
  });

  it('two instances allow 300 organization API requests per minute per source together, not 600', async () => {
    const [a, b] = [await instance({ rateLimit: ORG_API_RATE_LIMIT }), await instance({ rateLimit: ORG_API_RATE_LIMIT })];
    try {
      const read = (server: Server) => server.request('GET', '/api/v1/org/facilities', { apiKey: tenant.apiKey });
      const statuses: number[] = [];
      for (let i = 0; i < 150; i++) statuses.push(...(await Promise.all([read(a), read(b)])).map((r) => r.status));
      expect(statuses.filter((s) => s === 200)).to.have.length(300);
      const [overA, overB] = await Promise.all([read(a), read(b)]);
      expect([overA.status, overB.status]).to.deep.equal([429, 429]);
      expect(overB.headers.get('ratelimit-policy')).to.equal('"org-api";q=300;w=60');
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('a lockout outlives the instance that imposed it', async () => {
    const policy = { points: 2, abuseThreshold: 2 };
    const first = await instance({ rateLimit: policy, trustProxy: true });
    const headers = { 'X-Forwarded-For': '198.51.100.20' };
    try {
      let last = await first.request('GET', '/api/v1/org/facilities', { apiKey: tenant.apiKey, headers });
      for (let i = 0; i < 8 && last.body.retry_after !== 900; i++) last = await first.request('GET', '/api/v1/org/facilities', { apiKey: tenant.apiKey, headers });
      expect(last.status).to.equal(429);
      expect(last.body.retry_after).to.equal(900);
    } finally {
      await first.close();
    }
    // A new instance (its own pool and store), as after a restart or on another replica.
    const second = await instance({ rateLimit: policy, trustProxy: true });
    try {
      const res = await second.request('GET', '/api/v1/org/facilities', { apiKey: tenant.apiKey, headers });
      expect(res.status).to.equal(429);
      expect(res.body.retry_after).to.be.within(890, 900);
    } finally {
      await second.close();
    }
  });

  it('keeps lockout levels across instances: the next lockout after a restart is the second level (1 h)', async () => {
    const policy = { ...ORG_API_RATE_LIMIT, points: 1, abuseThreshold: 1 };
    const limiterOf = async () => new RateLimiter('levels', policy, await instanceStore());
    const lockouts: number[] = [];
    const hammer = async (limiter: RateLimiter, times: number) => {
      for (let i = 0; i < times; i++) await limiter.take('source', { onLockout: (n) => lockouts.push(n.seconds) }).catch((e: unknown) => expect(e).to.be.instanceOf(RateLimitedError));
    };
    // One allowed, one refusal tolerated, the next locks out (level 1).
    await hammer(await limiterOf(), 3);
    expect(lockouts).to.deep.equal([900]);
    // Another instance: two refusals during the lockout reach the second level.
    await hammer(await limiterOf(), 2);
    expect(lockouts).to.deep.equal([900, 3600]);
  });

  it('a burst of refused requests escalates the lockout one level, not one per request', async () => {
    const policy = { ...ORG_API_RATE_LIMIT, points: 1, abuseThreshold: 5 };
    const limiter = new RateLimiter('burst', policy, await instanceStore());
    const lockouts: number[] = [];
    await Promise.allSettled(Array.from({ length: 100 }, () => limiter.take('source', { onLockout: (n) => lockouts.push(n.level) })));
    expect(lockouts).to.deep.equal([1]);
  });

  it('serves requests when the counters do not answer, counting in memory meanwhile, and says so once', async () => {
    const { logger, text } = capturedLogger();
    let store: RateLimitStore;
    if (backend === 'Redis') {
      const client = new Redis('redis://127.0.0.1:1', { enableOfflineQueue: false, lazyConnect: true, maxRetriesPerRequest: 0 });
      client.on('error', () => undefined);
      clients.push(client);
      store = redisRateLimitStore(client, { log: logger, timeoutMs: 200 });
    } else {
      const unreachable = createKnex('postgres://postgres@127.0.0.1:1/none', { max: 1 });
      pools.push(unreachable);
      store = postgresRateLimitStore(unreachable, { log: logger, timeoutMs: 200 });
    }
    const limiter = new RateLimiter('insured', { ...ORG_API_RATE_LIMIT, points: 3 }, store);
    for (let i = 0; i < 3; i++) expect((await limiter.take('source')).remaining).to.equal(2 - i);
    const refused = await limiter.take('source').then(
      () => null,
      (e: unknown) => e,
    );
    expect(refused, 'the insurance still limits').to.be.instanceOf(RateLimitedError);
    expect(text().match(new RegExp(`rate-limit counters in ${backend} are slow or unreachable`, 'g'))).to.have.length(1);
  });
});
}
