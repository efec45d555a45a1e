// grant_type=refresh_token end to end: rotation, replay and concurrent refreshes revoking the
// family, scope narrowing, and the id_token on refresh.
import { expect } from 'chai';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import type { Stack } from '../../support/stack.js';
import { accessTokenHash } from '../../../shared/oauth/tokens.js';
import {
  APPS_AND_BACKEND,
  basic,
  expectOAuthError,
  familyIdOf,
  familyState,
  introspect,
  postForm,
  refresh,
  startProtocolStack,
  tokensFor,
  type TestClient,
  type TestUser,
} from './protocol-support.js';

describe('token endpoint: grant_type=refresh_token', function () {
  this.timeout(60_000);
  let stack: Stack;
  let user: TestUser;
  let app: TestClient;
  let otherApp: TestClient;
  let backend: TestClient;

  before(async () => {
    ({ stack, user, clients: { app, otherApp, backend } } = await startProtocolStack('oauth_refresh', APPS_AND_BACKEND));
  });
  after(async () => {
    await stack?.stop();
  });

  it('rotates: a new access token and a new refresh token, and an id_token with the same auth_time, amr and sid but no nonce', async () => {
    const { issued, tokens } = await tokensFor(stack, app, user, ['openid', 'offline_access', 'passes:read']);
    const res = await refresh(stack, app, tokens.refresh_token!);
    expect(res.status, res.text).to.equal(200);
    expect(res.headers.get('cache-control')).to.equal('no-store');
    expect(res.headers.get('pragma')).to.equal('no-cache');
    expect(res.body).to.have.keys(['access_token', 'token_type', 'expires_in', 'scope', 'id_token', 'refresh_token']);
    expect(res.body).to.include({ token_type: 'Bearer', expires_in: 900, scope: 'openid offline_access passes:read' });
    expect(res.body.refresh_token).to.not.equal(tokens.refresh_token);
    expect(res.body.access_token).to.not.equal(tokens.access_token);
    expect(familyIdOf(res.body.access_token)).to.equal(familyIdOf(tokens.access_token));

    const jwks = createRemoteJWKSet(new URL(`${stack.baseUrl}/.well-known/jwks.json`));
    await jwtVerify(res.body.access_token, jwks, { issuer: stack.baseUrl, typ: 'at+jwt', algorithms: ['RS256'] });
    const { payload } = await jwtVerify(res.body.id_token, jwks, { issuer: stack.baseUrl, audience: app.clientId });
    const first = decodeJwt(tokens.id_token!);
    expect(payload.auth_time).to.equal(first.auth_time);
    expect(payload.amr).to.deep.equal(first.amr);
    expect(payload.sid).to.equal(issued.session.sid);
    expect(payload.sub).to.equal(String(user.userId));
    expect(payload).to.not.have.property('nonce');
    expect(payload.at_hash).to.equal(accessTokenHash(res.body.access_token));

    // The new refresh token works in turn.
    const again = await refresh(stack, app, res.body.refresh_token);
    expect(again.status, again.text).to.equal(200);
  });

  it('replaying a spent refresh token fails and revokes the whole family, including the current token', async () => {
    const { tokens } = await tokensFor(stack, app, user);
    const rotated = await refresh(stack, app, tokens.refresh_token!);
    expect(rotated.status).to.equal(200);

    expectOAuthError(await refresh(stack, app, tokens.refresh_token!), 400, 'invalid_grant');
    expect(await familyState(stack, familyIdOf(tokens.access_token))).to.include({ status: 'revoked', reason: 'refresh_token_replay' });
    expectOAuthError(await refresh(stack, app, rotated.body.refresh_token), 400, 'invalid_grant');
  });

  for (const parallel of [2, 5]) {
    it(`of ${parallel} concurrent refreshes of one token exactly one succeeds, and the family ends revoked`, async () => {
      const { tokens } = await tokensFor(stack, app, user);
      const results = await Promise.all(Array.from({ length: parallel }, () => refresh(stack, app, tokens.refresh_token!)));
      expect(results.filter((r) => r.status === 200)).to.have.length(1);
      for (const r of results.filter((r) => r.status !== 200)) expectOAuthError(r, 400, 'invalid_grant');
      expect((await familyState(stack, familyIdOf(tokens.access_token))).status).to.equal('revoked');
      const winner = results.find((r) => r.status === 200)!;
      expectOAuthError(await refresh(stack, app, winner.body.refresh_token), 400, 'invalid_grant');
    });
  }

  it('narrows the scope when asked, keeps the whole grant for later refreshes, and refuses to widen it', async () => {
    const { tokens } = await tokensFor(stack, app, user, ['openid', 'offline_access', 'passes:read', 'passes:write']);
    const narrowed = await refresh(stack, app, tokens.refresh_token!, { scope: 'passes:read offline_access' });
    expect(narrowed.status, narrowed.text).to.equal(200);
    expect(narrowed.body.scope).to.equal('offline_access passes:read');
    expect(decodeJwt(narrowed.body.access_token).scope).to.equal('offline_access passes:read');
    expect(narrowed.body).to.not.have.property('id_token');

    const whole = await refresh(stack, app, narrowed.body.refresh_token);
    expect(whole.body.scope).to.equal('openid offline_access passes:read passes:write');

    expectOAuthError(await refresh(stack, app, whole.body.refresh_token, { scope: 'passes:read invites:read' }), 400, 'invalid_scope');
    // A refused request is not a rotation: the token is still current.
    expect((await refresh(stack, app, whole.body.refresh_token)).status).to.equal(200);
  });

  it('invalid_grant for another client’s refresh token, without touching the family', async () => {
    const { tokens } = await tokensFor(stack, app, user);
    expectOAuthError(await refresh(stack, otherApp, tokens.refresh_token!), 400, 'invalid_grant');
    expect((await familyState(stack, familyIdOf(tokens.access_token))).status).to.equal('active');
    expect((await refresh(stack, app, tokens.refresh_token!)).status).to.equal(200);
  });

  it('invalid_grant for malformed and unknown refresh tokens, which revoke nothing', async () => {
    const { tokens } = await tokensFor(stack, app, user);
    const familyId = familyIdOf(tokens.access_token);
    expectOAuthError(await refresh(stack, app, 'garbage'), 400, 'invalid_grant');
    expectOAuthError(await refresh(stack, app, `${familyId}.${'A'.repeat(43)}`), 400, 'invalid_grant');
    expect((await familyState(stack, familyId)).status).to.equal('active');
  });

  it('invalid_request when refresh_token is missing or repeated', async () => {
    expectOAuthError(await postForm(stack, '/api/oauth/token', { grant_type: 'refresh_token', client_id: app.clientId }), 400, 'invalid_request');
    const { tokens } = await tokensFor(stack, app, user);
    const repeated = await postForm(stack, '/api/oauth/token', [
      ['grant_type', 'refresh_token'],
      ['refresh_token', tokens.refresh_token!],
      ['refresh_token', tokens.refresh_token!],
      ['client_id', app.clientId],
    ]);
    expectOAuthError(repeated, 400, 'invalid_request');
  });

  it('confidential clients refresh with Basic; the rotated token is active in introspection and the spent one is not', async () => {
    const { tokens } = await tokensFor(stack, backend, user);
    const res = await postForm(
      stack,
      '/api/oauth/token',
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! },
      basic(backend.clientId, backend.clientSecret!),
    );
    expect(res.status, res.text).to.equal(200);
    expect((await introspect(stack, backend, res.body.refresh_token)).body.active).to.equal(true);
    expect((await introspect(stack, backend, tokens.refresh_token!)).body).to.deep.equal({ active: false });
  });
});
