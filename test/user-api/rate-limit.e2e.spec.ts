// 429 on the user-delegated API: 120 requests per minute per user by default, one bucket per
// user (not per address or client), every header the spec lists, back-pressure that never becomes
// a lockout (the caller is authenticated), and a revoked token never spending its user's bucket.
import { expect } from 'chai';
import { startStack, passBody, type Stack, type Server } from '../support/stack.js';
import { USER_API_RATE_LIMIT } from '../../shared/auth/access-token-auth.js';
import { expectInvalidToken, expectRateLimited } from '../support/api-answers.js';
import { accessToken, bearer, revokeFamily, serveUserApi, signedInUser, startFamily, userTenant } from './user-api-fixtures.js';

describe('user API: rate limit', function () {
  this.timeout(60_000);
  let stack: Stack;
  let tenant: Awaited<ReturnType<typeof userTenant>>;

  before(async () => {
    stack = await startStack({ label: 'user_rate' });
    tenant = await userTenant(stack);
  });
  after(async () => {
    await stack?.stop();
  });

  it('uses the spec policy, one bucket for both services: 120 requests per minute per user', async () => {
    const server = await serveUserApi(stack, USER_API_RATE_LIMIT);
    try {
      const user = await signedInUser(stack, tenant);
      const read = await server.request('GET', '/api/v1/passes', { headers: bearer(user.token) });
      const write = await server.request('POST', '/api/v1/passes', { headers: bearer(user.token), json: passBody(tenant.facilityId) });
      for (const [res, remaining] of [[read, '119'], [write, '118']] as const) {
        expect(res.status).to.be.oneOf([200, 201]);
        expect(res.headers.get('ratelimit-limit')).to.equal('120');
        expect(res.headers.get('ratelimit-policy')).to.equal('"user-api";q=120;w=60');
        expect(res.headers.get('ratelimit')).to.match(new RegExp(`^"user-api";r=${remaining};t=\\d+$`));
        expect(res.headers.get('ratelimit-remaining')).to.equal(remaining);
      }
    } finally {
      await server.close();
    }
  });

  describe('over the limit', () => {
    let server: Server;
    before(async () => {
      server = await serveUserApi(stack, { points: 4, abuseThreshold: 3 });
    });
    after(async () => {
      await server.close();
    });

    it('counts the user\'s reads, writes and userinfo in one bucket and answers 429 with every header', async () => {
      const user = await signedInUser(stack, tenant);
      const headers = bearer(user.token);
      const statuses = [
        (await server.request('GET', '/api/v1/passes', { headers })).status,
        (await server.request('POST', '/api/v1/passes', { headers, json: passBody(tenant.facilityId) })).status,
        (await server.request('GET', '/api/oauth/userinfo', { headers })).status,
        (await server.request('GET', '/api/v1/invites', { headers })).status,
      ];
      expect(statuses).to.deep.equal([200, 201, 200, 200]);

      const before = await stack.store.headPosition();
      const now = Math.floor(Date.now() / 1000);
      const res = await server.request('POST', '/api/v1/passes', { headers, json: passBody(tenant.facilityId) });
      expectRateLimited(res, 4, now, 'user-api');
      expect(await stack.store.headPosition(), 'a refused request writes nothing').to.deep.equal(before);
      expect((await server.request('GET', '/api/v1/passes', { headers })).status, 'reads are refused too').to.equal(429);

      // Another token of the same user shares the bucket; another user has a bucket of their own.
      const second = await accessToken(stack, { userId: user.userId, clientId: tenant.clientId });
      expect((await server.request('GET', '/api/v1/passes', { headers: bearer(second) })).status).to.equal(429);
      const neighbour = await signedInUser(stack, tenant);
      expect((await server.request('GET', '/api/v1/passes', { headers: bearer(neighbour.token) })).status).to.equal(200);
    });

    it('does not charge a revoked or invalid token to the user it names', async () => {
      const user = await signedInUser(stack, tenant);
      const familyId = await startFamily(stack, { ...tenant, userId: user.userId });
      const revoked = await accessToken(stack, { userId: user.userId, clientId: tenant.clientId, familyId });
      await revokeFamily(stack, familyId);
      const expired = await accessToken(stack, { userId: user.userId, clientId: tenant.clientId, now: new Date(Date.now() - 3600_000) });
      for (let i = 0; i < 3; i++) {
        expectInvalidToken(await server.request('GET', '/api/v1/passes', { headers: bearer(revoked) }), `revoked, attempt ${i + 1}`);
        expectInvalidToken(await server.request('POST', '/api/v1/passes', { headers: bearer(expired), json: passBody(tenant.facilityId) }), `expired, attempt ${i + 1}`);
      }
      const res = await server.request('GET', '/api/v1/passes', { headers: bearer(user.token) });
      expect(res.status).to.equal(200);
      expect(res.headers.get('ratelimit-remaining')).to.equal('3');
    });

    it('answers an app that keeps sending while refused with back-pressure inside the minute, never a lockout', async () => {
      const user = await signedInUser(stack, tenant);
      const headers = bearer(user.token);
      const refusals = [];
      // 4 allowed, then far more than the abuse threshold (3) of ignored 429s.
      for (let i = 0; i < 24; i++) {
        const res = await server.request('GET', '/api/v1/passes', { headers });
        if (res.status === 429) refusals.push(res);
      }
      expect(refusals).to.have.length(20);
      for (const res of refusals) {
        expect(res.body.retry_after).to.be.within(1, 60);
        expect(res.headers.get('retry-after')).to.equal(String(res.body.retry_after));
      }
    });
  });
});
