// API key authentication on every organization endpoint: both ways of sending a key, and the one
// indistinguishable 401 for missing, malformed, unknown, revoked, expired and IP-restricted keys.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { startStack, passBody, type Stack, type Tenant, type ApiResponse } from '../support/stack.js';
import { expectInsufficientScope, expectInvalidToken } from '../support/api-answers.js';
import { capturedLogger } from '../support/captured-logs.js';
import { streams } from '../../shared/domain/events.js';
import { userDecider } from '../../shared/domain/user-decider.js';
import { alteredCharacter } from '../support/altered.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** A well-formed key no one was ever given. */
const unknownKey = () => `svc_sk_${randomBytes(32).toString('base64url')}`;

describe('organization API: API key authentication', function () {
  this.timeout(60_000);
  let stack: Stack;
  let tenant: Tenant;
  let passId: string;

  before(async () => {
    stack = await startStack({ label: 'org_auth' });
    tenant = await stack.seed.tenant();
    const res = await stack.request('POST', '/api/v1/org/passes', { apiKey: tenant.apiKey, json: passBody(tenant.facilityId) });
    passId = res.body.public_id as string;
  });
  after(async () => {
    await stack?.stop();
  });

  it('stops a key when its admin loses the admin role (401 as for any bad key), and takes it back with the role', async () => {
    const other = await stack.seed.tenant();
    const role = async (type: 'RevokeRole' | 'GrantRole') => {
      const { position } = await stack.deps.handler.handle(
        streams.user(other.userId),
        userDecider,
        { type, data: { userId: other.userId, orgId: other.orgId, role: 'admin' } },
        { correlationId: randomBytes(8).toString('hex'), causationId: null, actor: { kind: 'operator' }, now: new Date() },
      );
      expect(await stack.deps.watermark.waitFor(position, 5000)).to.equal(true);
    };
    const facilities = () => stack.request('GET', '/api/v1/org/facilities', { apiKey: other.apiKey });
    expect((await facilities()).status).to.equal(200);
    await role('RevokeRole');
    for (const [method, path, json] of [
      ['GET', '/api/v1/org/facilities', undefined],
      ['POST', '/api/v1/org/passes', passBody(other.facilityId)],
    ] as const) {
      expectInvalidToken(await call(method, path, json, { Authorization: `Bearer ${other.apiKey}` }), `${method} ${path} with a key whose admin lost the role`);
    }
    await role('GrantRole');
    expect((await facilities()).status).to.equal(200);
  });

  const endpoints = () =>
    [
      ['GET', '/api/v1/org/passes', undefined],
      ['POST', '/api/v1/org/passes', passBody(tenant.facilityId)],
      ['DELETE', `/api/v1/org/passes/${passId}`, undefined],
      ['GET', '/api/v1/org/facilities', undefined],
    ] as const;

  async function call(method: string, path: string, json: unknown, headers: Record<string, string>): Promise<ApiResponse> {
    return stack.request(method, path, { headers, ...(json === undefined ? {} : { json }) });
  }

  it('accepts the key as Authorization: Bearer, as X-API-Key, and as both when they agree', async () => {
    const ways: Array<Record<string, string>> = [
      { Authorization: `Bearer ${tenant.apiKey}` },
      { 'X-API-Key': tenant.apiKey },
      { Authorization: `bearer ${tenant.apiKey}`, 'X-API-Key': tenant.apiKey },
    ];
    for (const headers of ways) {
      const res = await call('GET', '/api/v1/org/facilities', undefined, headers);
      expect(res.status, JSON.stringify(Object.keys(headers))).to.equal(200);
    }
    const created = await call('POST', '/api/v1/org/passes', passBody(tenant.facilityId), { 'X-API-Key': tenant.apiKey });
    expect(created.status).to.equal(201);
  });

  it('gives every failing credential the identical 401 invalid_token on every endpoint, and writes nothing', async () => {
    const revoked = await stack.seed.apiKey(tenant.orgId, tenant.userId);
    await stack.seed.revokeApiKey(revoked.keyId);
    const restricted = await stack.seed.apiKey(tenant.orgId, tenant.userId, { allowedIps: ['203.0.113.0/24', '2001:db8::/32'] });
    const expiring = await stack.seed.apiKey(tenant.orgId, tenant.userId, { expiresAt: new Date(Date.now() + 1500) });
    expect((await call('GET', '/api/v1/org/facilities', undefined, { 'X-API-Key': expiring.apiKey })).status).to.equal(200);
    await sleep(1600);

    const credentials: Array<[string, Record<string, string>]> = [
      ['no credential', {}],
      ['empty bearer', { Authorization: 'Bearer ' }],
      ['Basic scheme', { Authorization: `Basic ${Buffer.from(`x:${tenant.apiKey}`).toString('base64')}` }],
      ['not an API key', { Authorization: 'Bearer some.jwt.token' }],
      ['key without prefix', { Authorization: `Bearer ${tenant.apiKey.slice('svc_sk_'.length)}` }],
      ['key with a space inside', { Authorization: `Bearer ${tenant.apiKey.slice(0, 20)} ${tenant.apiKey.slice(20)}` }],
      ['unknown key', { Authorization: `Bearer ${unknownKey()}` }],
      ['unknown key in X-API-Key', { 'X-API-Key': unknownKey() }],
      ['two different keys', { Authorization: `Bearer ${tenant.apiKey}`, 'X-API-Key': unknownKey() }],
      ['revoked key', { Authorization: `Bearer ${revoked.apiKey}` }],
      ['expired key', { Authorization: `Bearer ${expiring.apiKey}` }],
      ['key from an address outside its allowlist', { Authorization: `Bearer ${restricted.apiKey}` }],
      ['allowlisted address claimed in X-Forwarded-For without a trusted proxy', { Authorization: `Bearer ${restricted.apiKey}`, 'X-Forwarded-For': '203.0.113.9' }],
    ];
    const before = await stack.store.headPosition();
    for (const [method, path, json] of endpoints()) {
      for (const [what, headers] of credentials) expectInvalidToken(await call(method, path, json, headers), `${what}: ${method} ${path}`);
    }
    expect(await stack.store.headPosition()).to.deep.equal(before);
  });

  it('refuses a key at once when it is revoked, though both services had just accepted (and cached) it', async () => {
    const key = await stack.seed.apiKey(tenant.orgId, tenant.userId);
    const headers = { Authorization: `Bearer ${key.apiKey}` };
    for (let i = 0; i < 2; i++) {
      expect((await call('GET', '/api/v1/org/facilities', undefined, headers)).status).to.equal(200);
      expect((await call('POST', '/api/v1/org/passes', passBody(tenant.facilityId), headers)).status).to.equal(201);
    }
    await stack.seed.revokeApiKey(key.keyId);
    expect((await call('GET', '/api/v1/org/facilities', undefined, headers)).status).to.equal(401);
    expect((await call('POST', '/api/v1/org/passes', passBody(tenant.facilityId), headers)).status).to.equal(401);
  });

  it('checks the source-IP allowlist against the socket address, IPv4-mapped or not', async () => {
    const local = await stack.seed.apiKey(tenant.orgId, tenant.userId, { allowedIps: ['127.0.0.0/8'] });
    const mapped = await stack.seed.apiKey(tenant.orgId, tenant.userId, { allowedIps: ['::ffff:127.0.0.1/128'] });
    for (const key of [local, mapped]) {
      expect((await call('GET', '/api/v1/org/facilities', undefined, { 'X-API-Key': key.apiKey })).status).to.equal(200);
    }
  });

  it('honours X-Forwarded-For (rightmost entry) only behind a trusted proxy', async () => {
    const restricted = await stack.seed.apiKey(tenant.orgId, tenant.userId, { allowedIps: ['203.0.113.0/24'] });
    const proxied = await stack.serve({ trustProxy: true });
    try {
      const headers = (forwardedFor: string) => ({ 'X-API-Key': restricted.apiKey, 'X-Forwarded-For': forwardedFor });
      expect((await proxied.request('GET', '/api/v1/org/facilities', { headers: headers('203.0.113.9') })).status).to.equal(200);
      expect((await proxied.request('GET', '/api/v1/org/facilities', { headers: headers('198.51.100.1, 203.0.113.9') })).status).to.equal(200);
      // A client cannot smuggle an allowed address in front of the one the proxy appended.
      expectInvalidToken(await proxied.request('GET', '/api/v1/org/facilities', { headers: headers('203.0.113.9, 198.51.100.1') }), 'spoofed');
    } finally {
      await proxied.close();
    }
  });

  it('gives 403 insufficient_scope with a challenge naming the missing scope, per endpoint', async () => {
    const nothingUseful = await stack.seed.apiKey(tenant.orgId, tenant.userId, { scopes: ['org:members:read'] });
    const needed = ['org:passes:read', 'org:passes:write', 'org:passes:write', 'org:facilities:read'];
    const before = await stack.store.headPosition();
    for (const [i, [method, path, json]] of endpoints().entries()) {
      const res = await call(method, path, json, { Authorization: `Bearer ${nothingUseful.apiKey}` });
      expectInsufficientScope(res, needed[i]!, `${method} ${path}`);
    }
    expect(await stack.store.headPosition()).to.deep.equal(before);
  });

  it('authenticates before reading the body: an unauthenticated oversized or malformed body is 401', async () => {
    for (const raw of ['{not json', 'x'.repeat(70 * 1024)]) {
      const res = await stack.request('POST', '/api/v1/org/passes', { raw, headers: { 'Content-Type': 'application/json' } });
      expectInvalidToken(res, `body of ${raw.length} bytes`);
    }
  });

  it('never logs the key', async () => {
    const { logger, text: loggedText } = capturedLogger();
    const logged = await startStack({ label: 'org_auth_log', logger });
    try {
      const t = await logged.seed.tenant();
      await logged.request('GET', '/api/v1/org/facilities', { apiKey: t.apiKey });
      await logged.request('POST', '/api/v1/org/passes', { headers: { 'X-API-Key': t.apiKey }, json: passBody(t.facilityId) });
      await logged.request('GET', '/api/v1/org/facilities', { apiKey: alteredCharacter(t.apiKey) });
    } finally {
      await logged.stop();
    }
    const text = loggedText();
    expect(text).to.include('"msg":"request"');
    expect(text).to.include('"reason":"unknown"');
    expect(text).not.to.include('svc_sk_');
  });
});
