// grant_type=authorization_code end to end: tokens verified against the published key set, every
// error row, replay revoking the grant, and confidential client authentication.
import { expect } from 'chai';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import type { Stack } from '../../support/stack.js';
import { accessTokenHash } from '../../../shared/oauth/tokens.js';
import {
  APPS_AND_BACKEND,
  basicExchange,
  exchange,
  expectOAuthError,
  familyIdOf,
  familyIdOfCode,
  familyState,
  introspect,
  issueCode,
  newVerifier,
  postForm,
  refresh,
  startProtocolStack,
  type TestClient,
  type TestUser,
} from './protocol-support.js';

describe('token endpoint: grant_type=authorization_code', function () {
  this.timeout(60_000);
  let stack: Stack;
  let user: TestUser;
  let app: TestClient;
  let otherApp: TestClient;
  let backend: TestClient;

  before(async () => {
    ({ stack, user, clients: { app, otherApp, backend } } = await startProtocolStack('oauth_code', {
      ...APPS_AND_BACKEND,
      backend: { ...APPS_AND_BACKEND.backend, redirectUris: ['https://backend.example.test/cb'] },
    }));
  });
  after(async () => {
    await stack?.stop();
  });

  describe('success', () => {
    it('returns an RS256 at+jwt access token of 900 s verifiable with the key set, an id_token and a refresh token', async () => {
      const authTime = new Date(Math.floor(Date.now() / 1000) * 1000 - 30_000);
      const issued = await issueCode(stack, app, user, { scopes: ['openid', 'email', 'offline_access', 'passes:read'], nonce: 'nonce-123', authTime });
      const res = await exchange(stack, app, issued);
      expect(res.status, res.text).to.equal(200);
      expect(res.headers.get('cache-control')).to.equal('no-store');
      expect(res.headers.get('pragma')).to.equal('no-cache');
      expect(res.headers.get('content-type')).to.match(/^application\/json/);
      expect(res.body).to.have.keys(['access_token', 'token_type', 'expires_in', 'scope', 'id_token', 'refresh_token']);
      expect(res.body).to.include({ token_type: 'Bearer', expires_in: 900, scope: 'openid email offline_access passes:read' });
      expect(res.body.refresh_token).to.be.a('string');

      const jwks = createRemoteJWKSet(new URL(`${stack.baseUrl}/.well-known/jwks.json`));
      const access = await jwtVerify(res.body.access_token, jwks, { issuer: stack.baseUrl, typ: 'at+jwt', algorithms: ['RS256'] });
      expect(access.protectedHeader).to.include({ alg: 'RS256', typ: 'at+jwt' });
      expect(access.payload.exp! - access.payload.iat!).to.equal(900);
      expect(access.payload).to.include({ sub: String(user.userId), client_id: app.clientId, scope: 'openid email offline_access passes:read' });

      const id = await jwtVerify(res.body.id_token, jwks, { issuer: stack.baseUrl, audience: app.clientId, algorithms: ['RS256'] });
      expect(decodeProtectedHeader(res.body.id_token).typ).to.equal('JWT');
      expect(id.payload).to.include({ sub: String(user.userId), aud: app.clientId, iss: stack.baseUrl, nonce: 'nonce-123', sid: issued.session.sid });
      expect(id.payload.auth_time).to.equal(authTime.getTime() / 1000);
      expect(id.payload.amr).to.deep.equal(['pwd', 'otp', 'mfa']);
      expect(id.payload.exp).to.be.a('number').greaterThan(id.payload.iat!);
      expect(id.payload.at_hash).to.equal(accessTokenHash(res.body.access_token));
    });

    it('issues no refresh token without offline_access and no id_token without openid', async () => {
      const issued = await issueCode(stack, app, user, { scopes: ['passes:read'], nonce: null });
      const res = await exchange(stack, app, issued);
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.have.keys(['access_token', 'token_type', 'expires_in', 'scope']);
      expect(res.body.scope).to.equal('passes:read');
    });

    it('leaves out the nonce when the authorize request had none', async () => {
      const issued = await issueCode(stack, app, user, { scopes: ['openid'], nonce: null });
      const res = await exchange(stack, app, issued);
      expect(res.status, res.text).to.equal(200);
      const jwks = createRemoteJWKSet(new URL(`${stack.baseUrl}/.well-known/jwks.json`));
      const { payload } = await jwtVerify(res.body.id_token, jwks, { issuer: stack.baseUrl, audience: app.clientId });
      expect(payload).to.not.have.property('nonce');
    });
  });

  describe('invalid_grant', () => {
    it('for a wrong code_verifier', async () => {
      const issued = await issueCode(stack, app, user);
      expectOAuthError(await exchange(stack, app, issued, { code_verifier: newVerifier() }), 400, 'invalid_grant');
    });

    it('for a redirect_uri that is not the authorize request’s byte for byte', async () => {
      const issued = await issueCode(stack, app, user);
      expectOAuthError(await exchange(stack, app, issued, { redirect_uri: `${issued.redirectUri}/` }), 400, 'invalid_grant');
    });

    it('for a code issued to another client', async () => {
      const issued = await issueCode(stack, app, user);
      expectOAuthError(await exchange(stack, otherApp, { ...issued, redirectUri: otherApp.redirectUri }), 400, 'invalid_grant');
      expectOAuthError(await exchange(stack, otherApp, issued), 400, 'invalid_grant');
    });

    it('for an expired code (older than 60 s)', async () => {
      const issued = await issueCode(stack, app, user, { now: new Date(Date.now() - 61_000) });
      expectOAuthError(await exchange(stack, app, issued), 400, 'invalid_grant');
    });

    it('for an unknown or malformed code', async () => {
      const issued = await issueCode(stack, app, user);
      expectOAuthError(await exchange(stack, app, issued, { code: 'A'.repeat(43) }), 400, 'invalid_grant');
      expectOAuthError(await exchange(stack, app, issued, { code: 'not-a-code' }), 400, 'invalid_grant');
      // The real code still works afterwards: failed guesses do not touch it.
      expect((await exchange(stack, app, issued)).status).to.equal(200);
    });

    it('uses the same generic description for every invalid_grant', async () => {
      const issued = await issueCode(stack, app, user);
      const wrongVerifier = await exchange(stack, app, issued, { code_verifier: newVerifier() });
      const unknownCode = await exchange(stack, app, issued, { code: 'B'.repeat(43) });
      expect(wrongVerifier.body).to.deep.equal(unknownCode.body);
    });
  });

  describe('a code exchanged twice', () => {
    it('fails the second time and revokes the grant: refresh token invalid_grant, access token inactive', async () => {
      const issued = await issueCode(stack, backend, user, { scopes: ['openid', 'offline_access'] });
      const first = await exchange(stack, backend, issued);
      expect(first.status, first.text).to.equal(200);
      expect((await introspect(stack, backend, first.body.access_token)).body.active).to.equal(true);

      expectOAuthError(await exchange(stack, backend, issued), 400, 'invalid_grant');

      expect((await familyState(stack, familyIdOf(first.body.access_token))).status).to.equal('revoked');
      expectOAuthError(await refresh(stack, backend, first.body.refresh_token), 400, 'invalid_grant');
      const introspection = await introspect(stack, backend, first.body.access_token);
      expect(introspection.status).to.equal(200);
      expect(introspection.body).to.deep.equal({ active: false });
    });

    it('records the revocation with reason authorization_code_replay, even when another client replays it', async () => {
      const issued = await issueCode(stack, app, user);
      const first = await exchange(stack, app, issued);
      expect(first.status).to.equal(200);
      expectOAuthError(await exchange(stack, otherApp, issued), 400, 'invalid_grant');
      const state = await familyState(stack, familyIdOf(first.body.access_token));
      expect(state).to.include({ status: 'revoked', reason: 'authorization_code_replay' });
    });

    it('gives tokens to at most one of several concurrent exchanges', async () => {
      const issued = await issueCode(stack, app, user);
      const results = await Promise.all([1, 2, 3].map(() => exchange(stack, app, issued)));
      const ok = results.filter((r) => r.status === 200);
      expect(ok.length).to.be.at.most(1);
      for (const r of results.filter((r) => r.status !== 200)) expectOAuthError(r, 400, 'invalid_grant');
      // Every extra presentation is a replay: the grant is revoked, whether or not one exchange got tokens.
      const familyId = await familyIdOfCode(stack, issued.code);
      if (ok[0]) expect(familyIdOf(ok[0].body.access_token)).to.equal(familyId);
      expect((await familyState(stack, familyId)).status).to.equal('revoked');
    });
  });

  describe('invalid_request', () => {
    for (const [name, verifier] of [
      ['missing', undefined],
      ['too short (42 characters)', 'a'.repeat(42)],
      ['too long (129 characters)', 'a'.repeat(129)],
      ['outside the RFC 7636 alphabet', `${'a'.repeat(42)}+`],
    ] as const) {
      it(`for a code_verifier that is ${name}`, async () => {
        const issued = await issueCode(stack, app, user);
        const fields: Record<string, string> = { grant_type: 'authorization_code', code: issued.code, redirect_uri: issued.redirectUri, client_id: app.clientId };
        if (verifier !== undefined) fields.code_verifier = verifier;
        expectOAuthError(await postForm(stack, '/api/oauth/token', fields), 400, 'invalid_request');
        // A malformed request does not spend the code.
        expect((await exchange(stack, app, issued)).status).to.equal(200);
      });
    }

    it('accepts verifiers of exactly 43 and 128 characters of the whole alphabet', async () => {
      for (const verifier of ['Az09-._~'.repeat(5) + 'abc', 'Az09-._~'.repeat(16)]) {
        const issued = await issueCode(stack, app, user, { verifier });
        expect((await exchange(stack, app, issued)).status, `length ${verifier.length}`).to.equal(200);
      }
    });

    for (const name of ['code', 'redirect_uri']) {
      it(`for a missing ${name}`, async () => {
        const issued = await issueCode(stack, app, user);
        const fields: Record<string, string> = {
          grant_type: 'authorization_code',
          code: issued.code,
          redirect_uri: issued.redirectUri,
          code_verifier: issued.verifier,
          client_id: app.clientId,
        };
        delete fields[name];
        expectOAuthError(await postForm(stack, '/api/oauth/token', fields), 400, 'invalid_request');
      });
    }

    it('for a repeated parameter', async () => {
      const issued = await issueCode(stack, app, user);
      const res = await postForm(stack, '/api/oauth/token', [
        ['grant_type', 'authorization_code'],
        ['code', issued.code],
        ['code', issued.code],
        ['redirect_uri', issued.redirectUri],
        ['code_verifier', issued.verifier],
        ['client_id', app.clientId],
      ]);
      expectOAuthError(res, 400, 'invalid_request');
    });
  });

  describe('confidential clients', () => {
    it('authenticate with HTTP Basic', async () => {
      const issued = await issueCode(stack, backend, user);
      const res = await basicExchange(stack, backend, issued);
      expect(res.status, res.text).to.equal(200);
      expect(res.body.access_token).to.be.a('string');
    });

    it('authenticate with client_secret_post', async () => {
      const issued = await issueCode(stack, backend, user);
      const res = await exchange(stack, backend, issued);
      expect(res.status, res.text).to.equal(200);
    });

    it('get 401 invalid_client with a Basic challenge for a wrong secret sent with Basic, and the code stays unspent', async () => {
      const issued = await issueCode(stack, backend, user);
      const res = await basicExchange(stack, backend, issued, 'wrong-secret');
      expectOAuthError(res, 401, 'invalid_client');
      expect(res.headers.get('www-authenticate')).to.match(/^Basic realm="[^"]+"/);
      expect((await exchange(stack, backend, issued)).status).to.equal(200);
    });

    it('get 401 invalid_client without a challenge for a wrong client_secret_post, or no secret at all', async () => {
      const issued = await issueCode(stack, backend, user);
      const wrong = await exchange(stack, backend, issued, { client_secret: 'wrong-secret' });
      expectOAuthError(wrong, 401, 'invalid_client');
      expect(wrong.headers.get('www-authenticate')).to.equal(null);
      const none = await exchange(stack, { ...backend, clientSecret: null }, issued);
      expectOAuthError(none, 401, 'invalid_client');
    });
  });

  it('401 invalid_client for an unknown client_id or none at all', async () => {
    const issued = await issueCode(stack, app, user);
    expectOAuthError(await exchange(stack, app, issued, { client_id: `svc_${'0'.repeat(32)}` }), 401, 'invalid_client');
    const res = await postForm(stack, '/api/oauth/token', {
      grant_type: 'authorization_code',
      code: issued.code,
      redirect_uri: issued.redirectUri,
      code_verifier: issued.verifier,
    });
    expectOAuthError(res, 401, 'invalid_client');
  });
});
