// 429 on the organization API: one per-IP bucket across the command and query apps, every
// header the spec lists, and the lockout after sustained abuse.
import { expect } from 'chai';
import { startStack, passBody, type Stack, type Tenant, type Server } from '../support/stack.js';
import { expectRateLimited } from '../support/api-answers.js';

describe('organization API: rate limit', function () {
  this.timeout(60_000);
  let stack: Stack;
  let tenant: Tenant;

  before(async () => {
    stack = await startStack({ label: 'org_rate' });
    tenant = await stack.seed.tenant();
  });
  after(async () => {
    await stack?.stop();
  });

  it('uses the spec policy by default: 300 requests per minute per source IP', async () => {
    const server = await stack.serve({ rateLimit: { points: 300, abuseThreshold: 300 } });
    try {
      const res = await server.request('GET', '/api/v1/org/facilities', { apiKey: tenant.apiKey });
      expect(res.status).to.equal(200);
      expect(res.headers.get('ratelimit-limit')).to.equal('300');
      expect(res.headers.get('ratelimit-remaining')).to.equal('299');
      expect(res.headers.get('ratelimit-policy')).to.equal('"org-api";q=300;w=60');
      expect(res.headers.get('ratelimit')).to.match(/^"org-api";r=299;t=(59|60)$/);
    } finally {
      await server.close();
    }
  });

  it('counts the addresses of one IPv6 /64 as one source (a subscriber holds the whole /64)', async () => {
    const server = await stack.serve({ trustProxy: true, rateLimit: { points: 2, abuseThreshold: 100 } });
    try {
      const from = (ip: string) => server.request('GET', '/api/v1/org/facilities', { apiKey: tenant.apiKey, headers: { 'X-Forwarded-For': ip } });
      expect((await from('2001:db8:7:1::1')).status).to.equal(200);
      expect((await from('2001:db8:7:1::2')).status).to.equal(200);
      expect((await from('2001:db8:7:1:abcd::3')).status).to.equal(429);
      // Another /64 has a bucket of its own.
      expect((await from('2001:db8:7:2::1')).status).to.equal(200);
    } finally {
      await server.close();
    }
  });

  describe('over the limit', () => {
    let server: Server;
    before(async () => {
      server = await stack.serve({ rateLimit: { points: 4, abuseThreshold: 3 } });
    });
    after(async () => {
      await server.close();
    });

    it('counts reads and writes in one bucket and answers 429 with every header and retry_after', async () => {
      const statuses = [];
      statuses.push((await server.request('GET', '/api/v1/org/passes', { apiKey: tenant.apiKey })).status);
      statuses.push((await server.request('POST', '/api/v1/org/passes', { apiKey: tenant.apiKey, json: passBody(tenant.facilityId) })).status);
      statuses.push((await server.request('GET', '/api/v1/org/facilities', { apiKey: tenant.apiKey })).status);
      statuses.push((await server.request('GET', '/api/v1/org/facilities')).status); // unauthenticated requests count too
      expect(statuses).to.deep.equal([200, 201, 200, 401]);

      const before = await stack.store.headPosition();
      const now = Math.floor(Date.now() / 1000);
      const res = await server.request('POST', '/api/v1/org/passes', { apiKey: tenant.apiKey, json: passBody(tenant.facilityId) });
      expectRateLimited(res, 4, now, 'org-api');
      expect(await stack.store.headPosition(), 'a refused request writes nothing').to.deep.equal(before);
    });

    it('locks the source out for 15 minutes when it keeps sending while refused', async () => {
      let last = await server.request('GET', '/api/v1/org/passes', { apiKey: tenant.apiKey });
      for (let i = 0; i < 5 && last.body.retry_after < 900; i++) {
        last = await server.request('GET', '/api/v1/org/passes', { apiKey: tenant.apiKey });
      }
      expect(last.status).to.equal(429);
      expect(last.body.retry_after).to.be.within(899, 900);
      expect(last.headers.get('retry-after')).to.equal(String(last.body.retry_after));
    });
  });

  it('does not limit the public OpenAPI document with the organization bucket', async () => {
    const server = await stack.serve({ rateLimit: { points: 1 } });
    try {
      for (let i = 0; i < 3; i++) expect((await server.request('GET', '/api/v1/openapi.json')).status).to.equal(200);
    } finally {
      await server.close();
    }
  });
});
