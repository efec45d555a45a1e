// POST /api/oauth/token, what holds for every grant: form bodies only, grant dispatch, CORS,
// no caching, and the per-IP rate limit.
import { expect } from 'chai';
import type { Stack } from '../../support/stack.js';
import {
  expectOAuthError,
  exchange,
  issueCode,
  postForm,
  serveProtocolRoutes,
  startProtocolStack,
  tokensFor,
  type ProtocolServer,
  type TestClient,
  type TestUser,
} from './protocol-support.js';

describe('token endpoint (POST /api/oauth/token)', function () {
  this.timeout(60_000);
  let stack: Stack;
  let user: TestUser;
  let app: TestClient;

  before(async () => {
    ({ stack, user, clients: { app } } = await startProtocolStack('oauth_token', { app: {} }));
  });
  after(async () => {
    await stack?.stop();
  });

  it('answers the CORS preflight for any origin, without credentials', async () => {
    const res = await stack.request('OPTIONS', '/api/oauth/token', {
      headers: { Origin: 'https://spa.example.test', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type' },
    });
    expect(res.status).to.equal(204);
    expect(res.headers.get('access-control-allow-origin')).to.equal('*');
    expect(res.headers.get('access-control-allow-methods')).to.include('POST');
    expect(res.headers.get('access-control-allow-headers')?.toLowerCase()).to.include('content-type');
    expect(res.headers.get('access-control-allow-credentials')).to.equal(null);
  });

  it('lets browser apps read successes and errors (Access-Control-Allow-Origin: *)', async () => {
    const origin = { Origin: 'https://spa.example.test' };
    const issued = await issueCode(stack, app, user);
    const ok = await postForm(
      stack,
      '/api/oauth/token',
      { grant_type: 'authorization_code', code: issued.code, redirect_uri: issued.redirectUri, code_verifier: issued.verifier, client_id: app.clientId },
      origin,
    );
    expect(ok.status).to.equal(200);
    expect(ok.headers.get('access-control-allow-origin')).to.equal('*');
    const failed = await postForm(stack, '/api/oauth/token', { grant_type: 'password', client_id: app.clientId }, origin);
    expect(failed.status).to.equal(400);
    expect(failed.headers.get('access-control-allow-origin')).to.equal('*');
  });

  it('unsupported_grant_type for any other grant', async () => {
    for (const grantType of ['password', 'client_credentials', 'implicit', 'urn:ietf:params:oauth:grant-type:device_code']) {
      expectOAuthError(await postForm(stack, '/api/oauth/token', { grant_type: grantType, client_id: app.clientId }), 400, 'unsupported_grant_type');
    }
  });

  it('invalid_request for a missing or repeated grant_type', async () => {
    expectOAuthError(await postForm(stack, '/api/oauth/token', { client_id: app.clientId }), 400, 'invalid_request');
    const repeated = await postForm(stack, '/api/oauth/token', [
      ['grant_type', 'refresh_token'],
      ['grant_type', 'authorization_code'],
      ['client_id', app.clientId],
    ]);
    expectOAuthError(repeated, 400, 'invalid_request');
  });

  it('invalid_request for a JSON body, another media type, or no body, and the code stays usable', async () => {
    const issued = await issueCode(stack, app, user);
    const fields = { grant_type: 'authorization_code', code: issued.code, redirect_uri: issued.redirectUri, code_verifier: issued.verifier, client_id: app.clientId };
    expectOAuthError(await stack.request('POST', '/api/oauth/token', { json: fields }), 400, 'invalid_request');
    const text = await stack.request('POST', '/api/oauth/token', { raw: new URLSearchParams(fields).toString(), headers: { 'Content-Type': 'text/plain' } });
    expectOAuthError(text, 400, 'invalid_request');
    expectOAuthError(await stack.request('POST', '/api/oauth/token'), 400, 'invalid_request');
    expect((await exchange(stack, app, issued)).status).to.equal(200);
  });

  it('accepts a charset parameter on the form media type', async () => {
    const issued = await issueCode(stack, app, user);
    const res = await stack.request('POST', '/api/oauth/token', {
      raw: new URLSearchParams({ grant_type: 'authorization_code', code: issued.code, redirect_uri: issued.redirectUri, code_verifier: issued.verifier, client_id: app.clientId }).toString(),
      headers: { 'Content-Type': 'application/x-www-form-urlencoded; charset=UTF-8' },
    });
    expect(res.status, res.text).to.equal(200);
  });

  it('invalid_request for an oversized body', async () => {
    const res = await postForm(stack, '/api/oauth/token', { grant_type: 'refresh_token', client_id: app.clientId, refresh_token: 'x'.repeat(20_000) });
    expectOAuthError(res, 400, 'invalid_request');
  });

  it('marks every answer no-store: success, protocol error, client error', async () => {
    const { tokens } = await tokensFor(stack, app, user);
    expect(tokens.access_token).to.be.a('string');
    const answers = [
      await postForm(stack, '/api/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: app.clientId }),
      await postForm(stack, '/api/oauth/token', { grant_type: 'refresh_token', refresh_token: 'nope', client_id: app.clientId }),
      await postForm(stack, '/api/oauth/token', { grant_type: 'refresh_token', refresh_token: 'nope', client_id: `svc_${'1'.repeat(32)}` }),
    ];
    expect(answers.map((r) => r.status)).to.deep.equal([200, 400, 401]);
    for (const res of answers) {
      expect(res.headers.get('cache-control')).to.equal('no-store');
      expect(res.headers.get('pragma')).to.equal('no-cache');
    }
  });

  describe('rate limit', () => {
    let server: ProtocolServer;

    before(async () => {
      // The same routes with a tiny limit, behind a trusted proxy so each test picks its own source IP.
      server = await serveProtocolRoutes(stack, { trustProxy: true, failureLimit: { points: 3 } });
    });
    after(async () => {
      await server?.close();
    });

    const attempt = (ip: string) =>
      server.request('POST', '/api/oauth/token', {
        raw: 'grant_type=refresh_token&refresh_token=nope&client_id=' + app.clientId,
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Forwarded-For': ip },
      });

    it('answers 429 temporarily_unavailable with Retry-After once a source IP exceeds its budget', async () => {
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await attempt('198.51.100.7')).status);
      expect(statuses).to.deep.equal([400, 400, 400]);
      const limited = await attempt('198.51.100.7');
      expect(limited.status).to.equal(429);
      expect(limited.body).to.include({ error: 'temporarily_unavailable' });
      expect(Number(limited.headers.get('retry-after'))).to.be.greaterThan(0);
      expect(limited.headers.get('ratelimit-remaining')).to.equal('0');
      expect(limited.headers.get('cache-control')).to.equal('no-store');
      expect(limited.headers.get('access-control-allow-origin')).to.equal('*');
    });

    it('counts each source IP on its own', async () => {
      for (let i = 0; i < 4; i++) await attempt('198.51.100.8');
      expect((await attempt('198.51.100.8')).status).to.equal(429);
      expect((await attempt('198.51.100.9')).status).to.equal(400);
    });
  });

  describe('unexpected failures', () => {
    let server: ProtocolServer;

    before(async () => {
      // The same routes over a client registry that cannot be reached.
      server = await serveProtocolRoutes(stack, {
        trustProxy: false,
        oauth: { clients: { findClient: () => Promise.reject(new Error('connection refused')) } },
      });
    });
    after(async () => {
      await server?.close();
    });

    it('answer 500 server_error in the OAuth shape, with no detail, at token, introspect and revoke', async () => {
      for (const [path, body] of [
        ['/api/oauth/token', `grant_type=refresh_token&refresh_token=x&client_id=${app.clientId}`],
        ['/api/oauth/introspect', `token=x&client_id=${app.clientId}&client_secret=s`],
        ['/api/oauth/revoke', `token=x&client_id=${app.clientId}`],
      ] as const) {
        const res = await server.request('POST', path, { raw: body, headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
        expectOAuthError(res, 500, 'server_error');
        expect(res.text, path).to.not.include('connection refused');
      }
    });
  });
});
