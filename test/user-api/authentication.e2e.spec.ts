// Access token authentication on every user-delegated endpoint, on both services: what is a
// valid token (Authorization: Bearer only), the one 401 invalid_token for every bad or revoked
// one, 403 insufficient_scope for a missing scope or a removed organization role, and no token
// in any log line.
import { expect } from 'chai';
import { SignJWT } from 'jose';
import { generateSigningKey } from '../../shared/oauth/signing-keys.js';
import { mintIdToken } from '../../shared/oauth/tokens.js';
import { deleteClient } from '../../command-service/oauth-clients/register-client.js';
import { startStack, passBody, type Stack, type ApiResponse } from '../support/stack.js';
import { expectInsufficientScope, expectInvalidToken, expectNoStore } from '../support/api-answers.js';
import { capturedLogger } from '../support/captured-logs.js';
import { alteredCharacter } from '../support/altered.js';
import {
  accessToken,
  bearer,
  operator,
  revokeFamily,
  revokeRole,
  seedPasses,
  signedInUser,
  startFamily,
  userTenant,
  type SignedInUser,
} from './user-api-fixtures.js';

describe('user API: access token authentication', function () {
  this.timeout(60_000);
  let stack: Stack;
  let tenant: Awaited<ReturnType<typeof userTenant>>;
  let user: SignedInUser;
  /** One of the user's own passes, for the GET and DELETE endpoints. */
  let passId: string;

  before(async () => {
    stack = await startStack({ label: 'user_auth' });
    tenant = await userTenant(stack);
    user = await signedInUser(stack, tenant);
    passId = (await seedPasses(stack, { ...tenant, userId: user.userId }))[0]!;
  });
  after(async () => {
    await stack?.stop();
  });

  /** Every user-delegated endpoint, with the scope it needs and whether it needs the self_invite role. */
  const endpoints = () =>
    [
      { method: 'GET', path: '/api/v1/passes', scope: 'passes:read', role: true },
      { method: 'GET', path: `/api/v1/passes/${passId}`, scope: 'passes:read', role: true },
      { method: 'POST', path: '/api/v1/passes', json: passBody(tenant.facilityId), scope: 'passes:write', role: true },
      { method: 'DELETE', path: `/api/v1/passes/${passId}`, scope: 'passes:write', role: true },
      { method: 'GET', path: '/api/v1/invites', scope: 'invites:read', role: true },
      { method: 'GET', path: '/api/oauth/userinfo', scope: 'openid', role: false },
      { method: 'POST', path: '/api/oauth/userinfo', scope: 'openid', role: false },
    ] as Array<{ method: string; path: string; json?: unknown; scope: string; role: boolean }>;

  function call(e: { method: string; path: string; json?: unknown }, headers: Record<string, string>, query = ''): Promise<ApiResponse> {
    return stack.request(e.method, e.path + query, { headers, ...(e.json === undefined ? {} : { json: e.json }) });
  }

  it('accepts a valid token on every endpoint', async () => {
    const fresh = await seedPasses(stack, { ...tenant, userId: user.userId });
    for (const e of endpoints()) {
      const path = e.path.replace(passId, fresh[0]!);
      const res = await call({ ...e, path }, bearer(user.token));
      expect(res.status, `${e.method} ${path}: ${res.text}`).to.be.oneOf([200, 201]);
      expectNoStore(res, `${e.method} ${path}`);
    }
    // The scheme name is case-insensitive (RFC 7235).
    expect((await stack.request('GET', '/api/v1/passes', { headers: { Authorization: `bearer ${user.token}` } })).status).to.equal(200);
  });

  it('gives every bad token the identical 401 invalid_token on every endpoint, and writes nothing', async () => {
    const ours = await stack.oauth.signingKeys.current();
    const foreign = (await generateSigningKey(Buffer.alloc(32, 9), new Date())).key;
    const base = { userId: user.userId, clientId: tenant.clientId };
    const expired = await accessToken(stack, { ...base, now: new Date(Date.now() - 16 * 60_000) });
    const wrongAudience = await accessToken(stack, { ...base, audience: 'https://elsewhere.example/api' });
    const wrongIssuer = await accessToken(stack, { ...base, issuer: 'https://impostor.example' });
    const foreignKey = await accessToken({ oauth: { ...stack.oauth, signingKeys: { current: async () => foreign } as never } }, base);
    const foreignKeyOurKid = await accessToken({ oauth: { ...stack.oauth, signingKeys: { current: async () => ({ ...foreign, kid: ours.kid }) } as never } }, base);
    const [head, payload] = user.token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    const tampered = `${head}.${Buffer.from(JSON.stringify({ ...claims, scope: `${String(claims.scope)} members:read` })).toString('base64url')}.${user.token.split('.')[2]}`;
    const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt' })).toString('base64url')}.${payload}.`;
    const hmac = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', kid: ours.kid }).sign(Buffer.alloc(32, 1));
    const idToken = await mintIdToken(ours, {
      issuer: stack.oauth.issuer,
      subject: String(user.userId),
      clientId: tenant.clientId,
      nonce: null,
      authTime: new Date().toISOString(),
      amr: ['pwd'],
      sid: 'sess_0123456789abcdef',
      now: new Date(),
    });
    const notAUser = await accessToken(stack, { ...base, userId: 0 });

    const credentials: Array<[string, Record<string, string>]> = [
      ['no credential', {}],
      ['empty bearer', { Authorization: 'Bearer ' }],
      ['Basic scheme', { Authorization: `Basic ${Buffer.from(`x:${user.token}`).toString('base64')}` }],
      ['not a JWT', { Authorization: 'Bearer not-a-token' }],
      ['two tokens', { Authorization: `Bearer ${user.token} ${user.token}` }],
      ['token in X-API-Key', { 'X-API-Key': user.token }],
      ['expired', bearer(expired)],
      ['wrong audience', bearer(wrongAudience)],
      ['wrong issuer', bearer(wrongIssuer)],
      ['signed by a foreign key', bearer(foreignKey)],
      ['signed by a foreign key under our kid', bearer(foreignKeyOurKid)],
      ['payload altered after signing', bearer(tampered)],
      ['alg none', bearer(unsigned)],
      ['HS256', bearer(hmac)],
      ['an id_token (typ JWT)', bearer(idToken)],
      ['sub that is not a user id', bearer(notAUser)],
    ];
    const before = await stack.store.headPosition();
    for (const e of endpoints()) {
      for (const [what, headers] of credentials) expectInvalidToken(await call(e, headers), `${what}: ${e.method} ${e.path}`);
    }
    expect(await stack.store.headPosition()).to.deep.equal(before);
  });

  it('never takes a token from the query string or a form body', async () => {
    for (const e of endpoints()) {
      const res = await call(e, {}, `?access_token=${encodeURIComponent(user.token)}`);
      expectInvalidToken(res, `query string: ${e.method} ${e.path}`);
    }
    const form = await stack.request('POST', '/api/oauth/userinfo', {
      raw: `access_token=${encodeURIComponent(user.token)}`,
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expectInvalidToken(form, 'form body at userinfo');
  });

  it('gives 403 insufficient_scope naming the missing scope, per endpoint, and writes nothing', async () => {
    const before = await stack.store.headPosition();
    for (const e of endpoints()) {
      // Every scope but the one the endpoint needs.
      const scopes = (['openid', 'profile', 'email', 'passes:read', 'passes:write', 'invites:read', 'members:read', 'offline_access'] as const).filter((s) => s !== e.scope);
      const token = await accessToken(stack, { userId: user.userId, clientId: tenant.clientId, scopes });
      expectInsufficientScope(await call(e, bearer(token)), e.scope, `${e.method} ${e.path}`);
    }
    expect(await stack.store.headPosition()).to.deep.equal(before);
  });

  it('refuses a revoked family with 401 on the query service and the command service', async () => {
    const familyId = await startFamily(stack, { ...tenant, userId: user.userId });
    const token = await accessToken(stack, { userId: user.userId, clientId: tenant.clientId, familyId });
    const [ownPass] = await seedPasses(stack, { ...tenant, userId: user.userId });
    expect((await stack.request('GET', '/api/v1/passes', { headers: bearer(token) })).status).to.equal(200);

    await revokeFamily(stack, familyId);
    const before = await stack.store.headPosition();
    for (const e of endpoints()) {
      const res = await call({ ...e, path: e.path.replace(passId, ownPass!) }, bearer(token));
      expectInvalidToken(res, `revoked family: ${e.method} ${e.path}`);
    }
    expect(await stack.store.headPosition(), 'no write with a revoked token').to.deep.equal(before);
    // The family's revocation concerns that family only.
    expect((await stack.request('GET', '/api/v1/passes', { headers: bearer(user.token) })).status).to.equal(200);
  });

  it('reads revocation from the read model on the query service and from the stream on the command service', async () => {
    const familyId = await startFamily(stack, { ...tenant, userId: user.userId });
    const token = await accessToken(stack, { userId: user.userId, clientId: tenant.clientId, familyId });
    await revokeFamily(stack, familyId);
    // Take the row out of the read model, as if the projection had not applied the event yet.
    expect(await stack.db('revoked_token_families').where({ family_id: familyId }).del()).to.equal(1);
    expect((await stack.request('GET', '/api/v1/passes', { headers: bearer(token) })).status, 'query service: read model').to.equal(200);
    expectInvalidToken(await stack.request('POST', '/api/v1/passes', { headers: bearer(token), json: passBody(tenant.facilityId) }), 'command service: the stream');
  });

  it('answers 403 insufficient_scope on /api/v1/* once the self_invite role is removed, and still serves userinfo', async () => {
    const member = await signedInUser(stack, tenant);
    const [own] = await seedPasses(stack, { ...tenant, userId: member.userId });
    expect((await stack.request('GET', `/api/v1/passes/${own}`, { headers: bearer(member.token) })).status).to.equal(200);

    await revokeRole(stack, { userId: member.userId, orgId: tenant.orgId });
    const before = await stack.store.headPosition();
    for (const e of endpoints()) {
      const res = await call({ ...e, path: e.path.replace(passId, own!) }, bearer(member.token));
      if (e.role) expectInsufficientScope(res, e.scope, `role removed: ${e.method} ${e.path}`);
      else expect(res.status, `${e.method} ${e.path} needs no role`).to.equal(200);
    }
    expect(await stack.store.headPosition()).to.deep.equal(before);

    const withoutRole = await signedInUser(stack, tenant, { roles: ['employee_view'] });
    expectInsufficientScope(await stack.request('GET', '/api/v1/passes', { headers: bearer(withoutRole.token) }), 'passes:read', 'never had the role');
  });

  it('binds the token to its client: a user of another organization, or a deleted client, gets nothing', async () => {
    const other = await userTenant(stack);
    const outsider = await stack.seed.user(other.orgId);
    // A token naming a user the client's organization does not have.
    const crossed = await accessToken(stack, { userId: outsider.userId, clientId: tenant.clientId });
    expectInsufficientScope(await stack.request('GET', '/api/v1/passes', { headers: bearer(crossed) }), 'passes:read', 'user outside the client organization');
    expectInvalidToken(await stack.request('GET', '/api/oauth/userinfo', { headers: bearer(crossed) }), 'userinfo for a user outside the client organization');

    const member = await signedInUser(stack, other);
    expect((await stack.request('GET', '/api/v1/passes', { headers: bearer(member.token) })).status).to.equal(200);
    await deleteClient(stack.deps, { orgId: other.orgId, clientId: other.clientId }, operator());
    for (const e of endpoints()) expectInvalidToken(await call(e, bearer(member.token)), `deleted client: ${e.method} ${e.path}`);
  });

  it('authenticates before reading the body: an unauthenticated malformed or oversized body is 401', async () => {
    for (const raw of ['{not json', 'x'.repeat(70 * 1024)]) {
      expectInvalidToken(await stack.request('POST', '/api/v1/passes', { raw, headers: { 'Content-Type': 'application/json' } }), `body of ${raw.length} bytes`);
    }
  });

  it('never logs the token, and logs why it was refused', async () => {
    const { logger, text: loggedText } = capturedLogger();
    const logged = await startStack({ label: 'user_auth_log', logger });
    const tokens: string[] = [];
    try {
      const t = await userTenant(logged);
      const u = await signedInUser(logged, t);
      tokens.push(u.token);
      await logged.request('GET', `/api/v1/passes?access_token=${u.token}`, { headers: bearer(u.token) });
      await logged.request('POST', '/api/v1/passes', { headers: bearer(u.token), json: passBody(t.facilityId) });
      await logged.request('GET', '/api/oauth/userinfo', { headers: bearer(u.token) });
      await logged.request('GET', '/api/v1/passes', { headers: bearer(alteredCharacter(u.token)) });
    } finally {
      await logged.stop();
    }
    const text = loggedText();
    expect(text).to.include('"msg":"request"');
    expect(text).to.include('"reason":"unverified"');
    for (const token of tokens) {
      for (const part of token.split('.')) expect(text).not.to.include(part);
    }
  });
});
