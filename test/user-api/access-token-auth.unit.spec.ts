// The access token middleware with fake ports: the order of its checks, what each failure is,
// and the principal it sets. No I/O: a key pair of the test's own, verified from a local key set.
import { expect } from 'chai';
import { accessTokenAuth, SELF_INVITE_ROLE, type TokenAccount } from '../../shared/auth/access-token-auth.js';
import type { UserPrincipal } from '../../shared/auth/principal.js';
import { InsufficientScopeError, InvalidTokenError, RateLimitedError } from '../../shared/errors.js';
import type { HttpContext } from '../../shared/http/http-state.js';
import { RateLimiter } from '../../shared/http/rate-limit.js';
import { generateSigningKey, toJwks, type ActiveSigningKey } from '../../shared/oauth/signing-keys.js';
import { accessTokenAudience, localKeySet, mintAccessToken } from '../../shared/oauth/tokens.js';
import type { OAuthScope } from '../../shared/oauth/scopes.js';

const ISSUER = 'https://id.example.test';
const CLIENT = `svc_${'c'.repeat(32)}`;
const FAMILY = '0123456789abcdef0123456789abcdef';
const silent = { info() {}, warn() {} };

describe('accessTokenAuth (unit)', () => {
  let key: ActiveSigningKey;
  let keys: ReturnType<typeof localKeySet>;

  before(async () => {
    const generated = await generateSigningKey(Buffer.alloc(32, 3), new Date());
    key = generated.key;
    keys = localKeySet(toJwks([generated.record]));
  });

  const token = async (scopes: OAuthScope[], o: { sub?: string; familyId?: string } = {}) =>
    (
      await mintAccessToken(key, {
        issuer: ISSUER,
        audience: accessTokenAudience(ISSUER),
        subject: o.sub ?? '42',
        clientId: CLIENT,
        scopes,
        familyId: o.familyId ?? FAMILY,
        now: new Date(),
      })
    ).token;

  interface World {
    revoked?: boolean;
    clientOrg?: number | null;
    user?: TokenAccount | null;
    limiter?: RateLimiter;
  }

  /** Runs the middleware once; resolves with the principal it set, or rejects with its error. */
  async function run(world: World, authorization: string | undefined, scope: OAuthScope, role?: typeof SELF_INVITE_ROLE | null) {
    const calls: string[] = [];
    const access = accessTokenAuth({
      issuer: ISSUER,
      verificationKeys: keys,
      revocations: { isRevoked: async () => (calls.push('revocation'), world.revoked ?? false) },
      accounts: {
        clientOrgId: async () => (calls.push('client'), world.clientOrg === undefined ? 7 : world.clientOrg),
        user: async () => (calls.push('user'), world.user === undefined ? { orgId: 7, roles: ['self_invite'] } : world.user),
      },
      rateLimiter: world.limiter ?? new RateLimiter('test', { points: 100, windowSeconds: 60, abuseThreshold: 100, abuseWindowSeconds: 60, lockoutSeconds: [60], lockoutMemorySeconds: 60, escalation: 'never' }),
    });
    const state: Record<string, unknown> = { log: silent };
    const ctx = {
      get: (name: string) => (name.toLowerCase() === 'authorization' ? (authorization ?? '') : ''),
      set: () => undefined,
      state,
    } as unknown as HttpContext;
    let reached = false;
    const middleware = access(scope, role === undefined ? undefined : { role });
    try {
      await middleware(ctx, async () => {
        reached = true;
      });
    } catch (error) {
      expect(reached, 'next() after a refusal').to.equal(false);
      return { error, calls };
    }
    expect(reached).to.equal(true);
    return { principal: state.principal as UserPrincipal, calls };
  }

  it('sets the UserPrincipal from the token and the client\'s organization', async () => {
    const { principal } = await run({}, `Bearer ${await token(['openid', 'passes:read'])}`, 'passes:read');
    expect(principal).to.deep.equal({ kind: 'user', userId: 42, orgId: 7, clientId: CLIENT, scopes: ['openid', 'passes:read'] });
  });

  it('refuses a revoked family with 401 before looking at the user or charging the rate limit', async () => {
    const limiter = new RateLimiter('t', { points: 1, windowSeconds: 60, abuseThreshold: 10, abuseWindowSeconds: 60, lockoutSeconds: [60], lockoutMemorySeconds: 60, escalation: 'never' });
    const { error, calls } = await run({ revoked: true, user: null, limiter }, `Bearer ${await token(['passes:read'])}`, 'passes:read');
    expect(error).to.be.instanceOf(InvalidTokenError);
    expect(calls).to.deep.equal(['revocation']);
    expect((await run({ limiter }, `Bearer ${await token(['passes:read'])}`, 'passes:read')).principal).to.include({ userId: 42 });
    expect((await run({ limiter }, `Bearer ${await token(['passes:read'])}`, 'passes:read')).error).to.be.instanceOf(RateLimitedError);
  });

  it('refuses malformed and unverifiable tokens with 401 without any lookup', async () => {
    const valid = await token(['passes:read']);
    const headers = [undefined, '', 'Bearer', `Basic ${valid}`, `Bearer ${valid}x`, `Bearer ${valid.split('.').slice(0, 2).join('.')}`, `Bearer ${'a'.repeat(5000)}.b.c`];
    for (const header of headers) {
      const { error, calls } = await run({}, header, 'passes:read');
      expect(error, String(header).slice(0, 40)).to.be.instanceOf(InvalidTokenError);
      expect(calls).to.deep.equal([]);
    }
    for (const claims of [{ sub: 'alice' }, { sub: '0' }, { familyId: 'not-a-family' }]) {
      const { error, calls } = await run({}, `Bearer ${await token(['passes:read'], claims)}`, 'passes:read');
      expect(error, JSON.stringify(claims)).to.be.instanceOf(InvalidTokenError);
      expect(calls).to.deep.equal([]);
    }
  });

  it('refuses with 401 when the client is gone', async () => {
    const { error } = await run({ clientOrg: null }, `Bearer ${await token(['openid'])}`, 'openid', null);
    expect(error).to.be.instanceOf(InvalidTokenError);
  });

  it('needs the role on /api/v1/* (403 naming the route scope) but not where the role is null', async () => {
    const cases: Array<[string, TokenAccount | null]> = [
      ['role revoked', { orgId: 7, roles: ['employee_view'] }],
      ['user absent', null],
      ['user in another organization', { orgId: 8, roles: ['self_invite'] }],
    ];
    for (const [what, user] of cases) {
      const { error } = await run({ user }, `Bearer ${await token(['openid', 'passes:write'])}`, 'passes:write');
      expect(error, what).to.be.instanceOf(InsufficientScopeError);
      expect((error as InsufficientScopeError).scope).to.equal('passes:write');
    }
    expect((await run({ user: { orgId: 7, roles: [] } }, `Bearer ${await token(['openid'])}`, 'openid', null)).principal).to.include({ userId: 42 });
    // Without a role requirement, a user who is not there is not authenticated at all.
    expect((await run({ user: null }, `Bearer ${await token(['openid'])}`, 'openid', null)).error).to.be.instanceOf(InvalidTokenError);
  });

  it('refuses a missing scope with 403 naming it', async () => {
    const { error } = await run({}, `Bearer ${await token(['openid', 'passes:read'])}`, 'passes:write');
    expect(error).to.be.instanceOf(InsufficientScopeError);
    expect((error as InsufficientScopeError).scope).to.equal('passes:write');
  });
});
