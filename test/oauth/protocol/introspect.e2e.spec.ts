// POST /api/oauth/introspect (RFC 7662) end to end: confidential clients only, own tokens only,
// and every token that is not active reads exactly {"active": false}.
import { expect } from 'chai';
import { SignJWT, decodeJwt, decodeProtectedHeader, generateKeyPair } from 'jose';
import type { Stack } from '../../support/stack.js';
import {
  basic,
  expectOAuthError,
  familyIdOf,
  introspect,
  postForm,
  refresh,
  revoke,
  startProtocolStack,
  tokensFor,
  type TestClient,
  type TestUser,
} from './protocol-support.js';

describe('introspection endpoint (POST /api/oauth/introspect)', function () {
  this.timeout(60_000);
  let stack: Stack;
  let user: TestUser;
  let backend: TestClient;
  let otherBackend: TestClient;
  let app: TestClient;

  before(async () => {
    ({ stack, user, clients: { backend, otherBackend, app } } = await startProtocolStack('oauth_introspect', {
      backend: { clientType: 'confidential' },
      otherBackend: { clientType: 'confidential', name: 'Other Backend' },
      app: {},
    }));
  });
  after(async () => {
    await stack?.stop();
  });

  it('describes an active access token of the caller', async () => {
    const { tokens } = await tokensFor(stack, backend, user, ['openid', 'offline_access', 'passes:read']);
    const res = await introspect(stack, backend, tokens.access_token);
    expect(res.status).to.equal(200);
    expect(res.headers.get('cache-control')).to.equal('no-store');
    const claims = decodeJwt(tokens.access_token);
    expect(res.body).to.deep.equal({
      active: true,
      scope: 'openid offline_access passes:read',
      client_id: backend.clientId,
      sub: String(user.userId),
      exp: claims.exp,
      iat: claims.iat,
      token_type: 'Bearer',
      iss: stack.baseUrl,
      aud: `${stack.baseUrl}/api`,
      jti: claims.jti,
    });
  });

  it('describes the current refresh token of the caller', async () => {
    const { tokens } = await tokensFor(stack, backend, user, ['offline_access', 'passes:read']);
    const res = await postForm(stack, '/api/oauth/introspect', { token: tokens.refresh_token!, client_id: backend.clientId, client_secret: backend.clientSecret! });
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ active: true, scope: 'offline_access passes:read', client_id: backend.clientId, sub: String(user.userId), token_type: 'refresh_token', iss: stack.baseUrl });
    expect(res.body.exp).to.be.a('number').greaterThan(Date.now() / 1000);
  });

  it('{"active": false} for another client’s tokens', async () => {
    const { tokens } = await tokensFor(stack, backend, user);
    expect((await introspect(stack, otherBackend, tokens.access_token)).body).to.deep.equal({ active: false });
    expect((await introspect(stack, otherBackend, tokens.refresh_token!)).body).to.deep.equal({ active: false });
    // ...while they are active for their own client.
    expect((await introspect(stack, backend, tokens.access_token)).body.active).to.equal(true);
  });

  it('{"active": false} for the tokens of a revoked family', async () => {
    const { tokens } = await tokensFor(stack, backend, user);
    expect((await revoke(stack, backend, tokens.refresh_token!)).status).to.equal(200);
    expect((await introspect(stack, backend, tokens.access_token)).body).to.deep.equal({ active: false });
    expect((await introspect(stack, backend, tokens.refresh_token!)).body).to.deep.equal({ active: false });
  });

  it('{"active": false} for a spent refresh token (without revoking the family)', async () => {
    const { tokens } = await tokensFor(stack, backend, user);
    const rotated = await refresh(stack, backend, tokens.refresh_token!);
    expect(rotated.status).to.equal(200);
    expect((await introspect(stack, backend, tokens.refresh_token!)).body).to.deep.equal({ active: false });
    expect((await introspect(stack, backend, rotated.body.refresh_token)).body.active).to.equal(true);
  });

  it('{"active": false} for garbage, an id_token, a tampered token and a token signed by a stranger', async () => {
    const { tokens } = await tokensFor(stack, backend, user, ['openid', 'offline_access']);
    const [header, payload, signature] = tokens.access_token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    const tampered = `${header}.${Buffer.from(JSON.stringify({ ...claims, scope: 'members:read' })).toString('base64url')}.${signature}`;
    const { privateKey } = await generateKeyPair('RS256');
    const forged = await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', kid: decodeProtectedHeader(tokens.access_token).kid! }).sign(privateKey);
    for (const token of ['garbage', tokens.id_token!, tampered, forged, `${familyIdOf(tokens.access_token)}.${'A'.repeat(43)}`]) {
      const res = await introspect(stack, backend, token);
      expect(res.status).to.equal(200);
      expect(res.body, token.slice(0, 20)).to.deep.equal({ active: false });
    }
  });

  it('401 invalid_client for a public client, a wrong secret, or no client at all', async () => {
    const { tokens } = await tokensFor(stack, app, user);
    expectOAuthError(await postForm(stack, '/api/oauth/introspect', { token: tokens.access_token, client_id: app.clientId }), 401, 'invalid_client');
    const wrong = await postForm(stack, '/api/oauth/introspect', { token: tokens.access_token }, basic(backend.clientId, 'nope'));
    expectOAuthError(wrong, 401, 'invalid_client');
    expect(wrong.headers.get('www-authenticate')).to.match(/^Basic /);
    expectOAuthError(await postForm(stack, '/api/oauth/introspect', { token: tokens.access_token }), 401, 'invalid_client');
  });

  it('invalid_request without a token or with a JSON body', async () => {
    expectOAuthError(await postForm(stack, '/api/oauth/introspect', {}, basic(backend.clientId, backend.clientSecret!)), 400, 'invalid_request');
    const json = await stack.request('POST', '/api/oauth/introspect', { json: { token: 'x' }, headers: basic(backend.clientId, backend.clientSecret!) });
    expectOAuthError(json, 400, 'invalid_request');
  });
});
