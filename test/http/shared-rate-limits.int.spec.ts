// Rate limits counted in PostgreSQL (rate-limit-store.ts): two instances of the services against
// one database allow the spec's 300 organization API requests per minute per source together,
// not 600; a lockout outlives the instance that imposed it; and when the counters' database does
// not answer, the requests are still served (in-memory insurance), with a warning.
import { expect } from 'chai';
import { createKnex, type Knex } from '../../shared/db/knex.js';
import { RateLimitedError } from '../../shared/errors.js';
import { ORG_API_RATE_LIMIT, RateLimiter } from '../../shared/http/rate-limit.js';
import { postgresRateLimitStore, RATE_LIMIT_TABLE } from '../../shared/http/rate-limit-store.js';
import { startStack, type Server, type Stack, type Tenant } from '../support/stack.js';
import { capturedLogger } from '../support/captured-logs.js';

describe('rate limits shared by every instance (PostgreSQL counters)', function () {
  this.timeout(120_000);
  let stack: Stack;
  let tenant: Tenant;
  const pools: Knex[] = [];
  /** An instance's own connection pool, as each process has. */
  const instancePool = () => {
    const pool = createKnex(stack.databaseUrl, { max: 4 });
    pools.push(pool);
    return pool;
  };
  const instance = (options: Parameters<Stack['serve']>[0] = {}) =>
    stack.serve({ ...options, rateLimitStore: postgresRateLimitStore(instancePool(), { log: capturedLogger().logger }) });

  before(async () => {
    stack = await startStack({ label: 'shared_limits' });
    tenant = await stack.seed.tenant();
  });
  after(async () => {
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
      expect(await stack.db(RATE_LIMIT_TABLE).where('key', 'org-api:req:127.0.0.1').first()).to.include({ points: 302 });
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
    const limiterOf = () => new RateLimiter('levels', policy, postgresRateLimitStore(instancePool(), { log: capturedLogger().logger }));
    const lockouts: number[] = [];
    const hammer = async (limiter: RateLimiter, times: number) => {
      for (let i = 0; i < times; i++) await limiter.take('source', { onLockout: (n) => lockouts.push(n.seconds) }).catch((e: unknown) => expect(e).to.be.instanceOf(RateLimitedError));
    };
    // One allowed, one refusal tolerated, the next locks out (level 1).
    await hammer(limiterOf(), 3);
    expect(lockouts).to.deep.equal([900]);
    // Another instance: two refusals during the lockout reach the second level.
    await hammer(limiterOf(), 2);
    expect(lockouts).to.deep.equal([900, 3600]);
  });

  it('a burst of refused requests escalates the lockout one level, not one per request', async () => {
    const policy = { ...ORG_API_RATE_LIMIT, points: 1, abuseThreshold: 5 };
    const limiter = new RateLimiter('burst', policy, postgresRateLimitStore(instancePool(), { log: capturedLogger().logger }));
    const lockouts: number[] = [];
    await Promise.allSettled(Array.from({ length: 100 }, () => limiter.take('source', { onLockout: (n) => lockouts.push(n.level) })));
    expect(lockouts).to.deep.equal([1]);
  });

  it('serves requests when the counters do not answer, counting in memory meanwhile, and says so once', async () => {
    const { logger, text } = capturedLogger();
    const unreachable = createKnex('postgres://postgres@127.0.0.1:1/none', { max: 1 });
    pools.push(unreachable);
    const limiter = new RateLimiter('insured', { ...ORG_API_RATE_LIMIT, points: 3 }, postgresRateLimitStore(unreachable, { log: logger, timeoutMs: 200 }));
    for (let i = 0; i < 3; i++) expect((await limiter.take('source')).remaining).to.equal(2 - i);
    const refused = await limiter.take('source').then(
      () => null,
      (e: unknown) => e,
    );
    expect(refused, 'the insurance still limits').to.be.instanceOf(RateLimitedError);
    expect(text().match(/rate-limit counters in PostgreSQL are slow or unreachable/g)).to.have.length(1);
  });
});
