// POST /api/oauth/revoke (RFC 7009) end to end: always 200 for an authenticated client, and a
// client's own refresh or access token revokes its whole family.
import { expect } from 'chai';
import type { Stack } from '../../support/stack.js';
import {
  APPS_AND_BACKEND,
  basic,
  expectOAuthError,
  familyIdOf,
  familyState,
  introspect,
  postForm,
  refresh,
  revoke,
  startProtocolStack,
  tokensFor,
  type TestClient,
  type TestUser,
} from './protocol-support.js';

describe('revocation endpoint (POST /api/oauth/revoke)', function () {
  this.timeout(60_000);
  let stack: Stack;
  let user: TestUser;
  let app: TestClient;
  let otherApp: TestClient;
  let backend: TestClient;

  before(async () => {
    ({ stack, user, clients: { app, otherApp, backend } } = await startProtocolStack('oauth_revoke', APPS_AND_BACKEND));
  });
  after(async () => {
    await stack?.stop();
  });

  function expectEmpty200(res: { status: number; text: string; headers: Headers }): void {
    expect(res.status).to.equal(200);
    expect(res.text).to.equal('');
    expect(res.headers.get('cache-control')).to.equal('no-store');
  }

  it('a public client revoking its refresh token revokes the whole family, the current token included', async () => {
    const { tokens } = await tokensFor(stack, app, user);
    const rotated = await refresh(stack, app, tokens.refresh_token!);
    // Revoking the spent token still names the family.
    expectEmpty200(await revoke(stack, app, tokens.refresh_token!));
    expect(await familyState(stack, familyIdOf(tokens.access_token))).to.include({ status: 'revoked', reason: 'revoked_by_client' });
    expectOAuthError(await refresh(stack, app, rotated.body.refresh_token), 400, 'invalid_grant');
  });

  it('a confidential client (Basic) revoking its access token revokes its family', async () => {
    const { tokens } = await tokensFor(stack, backend, user);
    expectEmpty200(await postForm(stack, '/api/oauth/revoke', { token: tokens.access_token, token_type_hint: 'access_token' }, basic(backend.clientId, backend.clientSecret!)));
    expect(await familyState(stack, familyIdOf(tokens.access_token))).to.include({ status: 'revoked', reason: 'revoked_by_client' });
    expect((await introspect(stack, backend, tokens.access_token)).body).to.deep.equal({ active: false });
    expectOAuthError(await refresh(stack, backend, tokens.refresh_token!), 400, 'invalid_grant');
  });

  it('200 and no change for another client’s tokens', async () => {
    const { tokens } = await tokensFor(stack, app, user);
    expectEmpty200(await revoke(stack, otherApp, tokens.refresh_token!));
    expectEmpty200(await revoke(stack, otherApp, tokens.access_token));
    expect((await familyState(stack, familyIdOf(tokens.access_token))).status).to.equal('active');
    expect((await refresh(stack, app, tokens.refresh_token!)).status).to.equal(200);
  });

  it('200 for unknown and malformed tokens and for a family revoked already', async () => {
    const { tokens } = await tokensFor(stack, app, user);
    const before = await stack.store.headPosition();
    expectEmpty200(await revoke(stack, app, 'garbage'));
    expectEmpty200(await revoke(stack, app, `${familyIdOf(tokens.access_token)}.${'A'.repeat(43)}`));
    expectEmpty200(await revoke(stack, app, 'eyJhbGciOiJub25lIn0.e30.'));
    // Nothing was written by any of them.
    expect(await stack.store.headPosition()).to.deep.equal(before);
    expectEmpty200(await revoke(stack, app, tokens.refresh_token!));
    expectEmpty200(await revoke(stack, app, tokens.refresh_token!));
  });

  it('401 invalid_client for a wrong secret (with a Basic challenge for Basic) and for no client', async () => {
    const { tokens } = await tokensFor(stack, backend, user);
    const wrongBasic = await postForm(stack, '/api/oauth/revoke', { token: tokens.refresh_token! }, basic(backend.clientId, 'nope'));
    expectOAuthError(wrongBasic, 401, 'invalid_client');
    expect(wrongBasic.headers.get('www-authenticate')).to.match(/^Basic /);
    expectOAuthError(await postForm(stack, '/api/oauth/revoke', { token: tokens.refresh_token! }), 401, 'invalid_client');
    expectOAuthError(await postForm(stack, '/api/oauth/revoke', { token: tokens.refresh_token!, client_id: backend.clientId }), 401, 'invalid_client');
    expect((await familyState(stack, familyIdOf(tokens.access_token))).status).to.equal('active');
  });

  it('invalid_request without a token', async () => {
    expectOAuthError(await postForm(stack, '/api/oauth/revoke', { client_id: app.clientId }), 400, 'invalid_request');
  });

  it('is CORS-open for browser apps', async () => {
    const { tokens } = await tokensFor(stack, app, user);
    const res = await postForm(stack, '/api/oauth/revoke', { token: tokens.refresh_token!, client_id: app.clientId }, { Origin: 'https://spa.example.test' });
    expect(res.status).to.equal(200);
    expect(res.headers.get('access-control-allow-origin')).to.equal('*');
    expect(res.headers.get('access-control-allow-credentials')).to.equal(null);
  });
});
