// Interoperability with openid-client (v6), a certified relying-party library, against the whole
// stack: openid-client does the protocol work (discovery, PKCE, state and nonce, RFC 9207 iss,
// id_token validation, client authentication, refresh, userinfo, introspection, revocation,
// end-session URL) and the cookie-jar browser drives the sign-in pages. What openid-client accepts
// is what any conformant client library will; what it sends is checked where the test names it.
import { expect } from 'chai';
import * as client from 'openid-client';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { startStack, type Stack } from '../support/stack.js';
import { Browser } from '../sign-in/support/browser.js';
import { startedSession } from '../sign-in/support/session-probe.js';
import {
  authorizeWithOpenIdClient,
  discoverRelyingParty,
  followAuthorization,
  sentTo,
  type ClientAuthMethod,
  type Credentials,
  type Registration,
  type RelyingParty,
  authorizationRequest,
} from './support/relying-party.js';

/** Awaits a rejection of an OAuth error response (RFC 6749 §5.2) and returns it. */
async function oauthError(promise: Promise<unknown>, error: string, status = 400): Promise<client.ResponseBodyError> {
  let caught: unknown;
  try {
    await promise;
  } catch (e) {
    caught = e;
  }
  expect(caught, `expected the ${error} error response`).to.be.instanceOf(client.ResponseBodyError);
  const err = caught as client.ResponseBodyError;
  expect({ error: err.error, status: err.status }).to.deep.equal({ error, status });
  return err;
}

/** The form-urlencoded Basic credentials (RFC 6749 §2.3.1), decoded. */
function basicCredentials(header: string | null): { id: string; secret: string } | null {
  const m = /^Basic (.+)$/.exec(header ?? '');
  if (!m) return null;
  const text = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = text.indexOf(':');
  const decode = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
  return { id: decode(text.slice(0, colon)), secret: decode(text.slice(colon + 1)) };
}

describe('interop: openid-client (v6) as the relying party', function () {
  this.timeout(120_000);
  let stack: Stack;
  let issuer: string;
  let user: { userId: number; email: string; password: string };
  let credentials: Credentials;
  let publicApp: Registration;
  let confidentialApp: Registration;
  let otherPublicApp: Registration;
  const signedOutUri = 'https://app.example.test/signed-out';

  before(async () => {
    stack = await startStack({ label: 'interop_openid_client' });
    issuer = stack.baseUrl;
    const { orgId } = await stack.seed.tenant();
    const u = await stack.seed.user(orgId);
    user = { userId: u.userId, email: u.email, password: u.password! };
    credentials = { email: user.email, password: user.password };
    publicApp = await stack.seed.client(orgId, { name: 'Interop SPA', clientType: 'public', postLogoutRedirectUris: [signedOutUri] });
    confidentialApp = await stack.seed.client(orgId, {
      name: 'Interop Backend',
      clientType: 'confidential',
      redirectUris: ['https://backend.example.test/callback'],
      postLogoutRedirectUris: ['https://backend.example.test/signed-out'],
    });
    otherPublicApp = await stack.seed.client(orgId, { name: 'Other SPA', redirectUris: ['https://other.example.test/callback'] });
  });
  after(async () => {
    await stack?.stop();
  });

  describe('discovery', () => {
    it('client.discovery reads the same metadata from /.well-known/openid-configuration and /.well-known/oauth-authorization-server', async () => {
      const oidc = await discoverRelyingParty(issuer, publicApp, 'none', { algorithm: 'oidc' });
      const oauth2 = await discoverRelyingParty(issuer, publicApp, 'none', { algorithm: 'oauth2' });
      // Each went to its own document (openid-client also checked that each names this issuer).
      expect(oidc.sent.map((r) => r.url.pathname)).to.deep.equal(['/.well-known/openid-configuration']);
      expect(oauth2.sent.map((r) => r.url.pathname)).to.deep.equal(['/.well-known/oauth-authorization-server']);
      const metadata = oidc.config.serverMetadata();
      expect(oauth2.config.serverMetadata()).to.deep.equal(metadata);
      expect(metadata.issuer).to.equal(issuer);
      expect(metadata.supportsPKCE('S256')).to.equal(true);
      expect(metadata.authorization_response_iss_parameter_supported).to.equal(true);
      expect(metadata.token_endpoint_auth_methods_supported).to.include.members(['none', 'client_secret_basic', 'client_secret_post']);
      for (const endpoint of ['userinfo_endpoint', 'end_session_endpoint', 'introspection_endpoint', 'revocation_endpoint'] as const) {
        expect(metadata[endpoint], endpoint).to.be.a('string').and.satisfy((url: string) => url.startsWith(`${issuer}/`));
      }
    });
  });

  const variants: ReadonlyArray<{ readonly title: string; readonly auth: ClientAuthMethod; readonly app: () => Registration }> = [
    { title: 'public client (token_endpoint_auth_method none)', auth: 'none', app: () => publicApp },
    { title: 'confidential client (client_secret_basic)', auth: 'client_secret_basic', app: () => confidentialApp },
    { title: 'confidential client (client_secret_post)', auth: 'client_secret_post', app: () => confidentialApp },
  ];

  for (const variant of variants) {
    describe(variant.title, () => {
      let rp: RelyingParty;

      before(async () => {
        rp = await discoverRelyingParty(issuer, variant.app(), variant.auth);
      });

      /** What the token endpoint saw of this client's authentication, request by request. */
      function expectClientAuthentication(requests: ReturnType<typeof sentTo>): void {
        expect(requests).to.not.have.length(0);
        const app = variant.app();
        for (const r of requests) {
          const basic = basicCredentials(r.headers.get('authorization'));
          if (variant.auth === 'client_secret_basic') {
            expect(basic).to.deep.equal({ id: app.clientId, secret: app.clientSecret });
            expect(r.form?.has('client_secret')).to.equal(false);
          } else {
            expect(basic).to.equal(null);
            expect(r.form?.get('client_id')).to.equal(app.clientId);
            expect(r.form?.get('client_secret') ?? null).to.equal(variant.auth === 'client_secret_post' ? app.clientSecret : null);
          }
        }
      }

      it(`authorization code + PKCE: the callback carries code, state and iss, and the code exchange authenticates with ${variant.auth}`, async () => {
        const sentBefore = sentTo(rp, rp.config.serverMetadata().token_endpoint).length;
        const { tokens, callback, state } = await authorizeWithOpenIdClient(rp, credentials);
        expect(callback.searchParams.get('code')).to.be.a('string').and.not.equal('');
        expect(callback.searchParams.get('state')).to.equal(state);
        expect(callback.searchParams.get('iss')).to.equal(issuer);
        // openid-client normalises token_type to lower case.
        expect(tokens).to.include({ token_type: 'bearer', expires_in: 900 });
        expect(tokens.scope).to.equal('openid profile email offline_access');
        expect(tokens.refresh_token).to.be.a('string');
        expect(tokens.id_token).to.be.a('string');

        const exchanges = sentTo(rp, rp.config.serverMetadata().token_endpoint).slice(sentBefore);
        expect(exchanges).to.have.length(1);
        expect(exchanges[0]!.form?.get('grant_type')).to.equal('authorization_code');
        expect(exchanges[0]!.form?.get('redirect_uri')).to.equal(rp.redirectUri);
        expect(exchanges[0]!.form?.get('code_verifier')).to.match(/^[A-Za-z0-9._~-]{43,128}$/);
        expectClientAuthentication(exchanges);
      });

      it('the id_token openid-client validated carries sub, aud, iss, exp, iat, auth_time, amr, nonce and sid of the sign-in', async () => {
        const { tokens, browser, nonce } = await authorizeWithOpenIdClient(rp, credentials);
        const session = await startedSession(stack, browser);
        const claims = tokens.claims();
        expect(claims).to.not.equal(undefined);
        expect(decodeProtectedHeader(tokens.id_token!).alg).to.equal('RS256');
        expect(claims).to.deep.include({
          iss: issuer,
          sub: String(user.userId),
          nonce,
          sid: session.sid,
          amr: ['pwd'],
          auth_time: Math.floor(Date.parse(session.authTime) / 1000),
        });
        expect([claims!.aud].flat()).to.include(rp.clientId);
        expect(claims!.iat).to.be.a('number');
        expect(claims!.exp).to.be.a('number').and.greaterThan(claims!.iat);
        expect(claims!.auth_time).to.be.at.most(claims!.iat);
      });

      it('the access token verifies with jose against the JWKS: typ at+jwt, RS256, exp - iat = 900', async () => {
        const { tokens } = await authorizeWithOpenIdClient(rp, credentials);
        const jwks = createRemoteJWKSet(new URL(rp.config.serverMetadata().jwks_uri!));
        const { payload, protectedHeader } = await jwtVerify(tokens.access_token, jwks, { issuer, typ: 'at+jwt', algorithms: ['RS256'] });
        expect(protectedHeader).to.include({ alg: 'RS256', typ: 'at+jwt' });
        expect(payload.exp! - payload.iat!).to.equal(900);
      });

      it('userinfo: client.fetchUserInfo with the id_token subject returns the scope-gated claims', async () => {
        const { tokens } = await authorizeWithOpenIdClient(rp, credentials);
        const sub = tokens.claims()!.sub;
        const info = await client.fetchUserInfo(rp.config, tokens.access_token, sub);
        expect(info).to.deep.include({ sub: String(user.userId), name: 'Uma User', given_name: 'Uma', family_name: 'User', email: user.email });
      });

      it('refresh: client.refreshTokenGrant returns a new refresh token each time, and each new one works', async () => {
        const { tokens } = await authorizeWithOpenIdClient(rp, credentials);
        const seen = new Set([tokens.refresh_token!]);
        let current = tokens.refresh_token!;
        for (let i = 0; i < 3; i++) {
          const next = await client.refreshTokenGrant(rp.config, current);
          expect(next.refresh_token).to.be.a('string');
          expect(seen.has(next.refresh_token!), `refresh ${i + 1} rotated the token`).to.equal(false);
          expect(next.access_token).to.not.equal(tokens.access_token);
          // openid-client validated the refreshed id_token; it still names the same user.
          expect(next.claims()?.sub).to.equal(String(user.userId));
          seen.add(next.refresh_token!);
          current = next.refresh_token!;
        }
        expectClientAuthentication(sentTo(rp, rp.config.serverMetadata().token_endpoint).filter((r) => r.form?.get('grant_type') === 'refresh_token'));
      });

      it('replay: the spent refresh token is invalid_grant, and then the newest refresh token fails too (the family is revoked)', async () => {
        const { tokens } = await authorizeWithOpenIdClient(rp, credentials);
        const rotated = await client.refreshTokenGrant(rp.config, tokens.refresh_token!);
        await oauthError(client.refreshTokenGrant(rp.config, tokens.refresh_token!), 'invalid_grant');
        await oauthError(client.refreshTokenGrant(rp.config, rotated.refresh_token!), 'invalid_grant');
      });

      it('revocation: client.tokenRevocation of the refresh token, after which refreshing it is invalid_grant', async () => {
        const { tokens } = await authorizeWithOpenIdClient(rp, credentials);
        await client.tokenRevocation(rp.config, tokens.refresh_token!);
        await oauthError(client.refreshTokenGrant(rp.config, tokens.refresh_token!), 'invalid_grant');
        expectClientAuthentication(sentTo(rp, rp.config.serverMetadata().revocation_endpoint));
      });

      it('concurrent refreshes of one token: exactly one succeeds, the others are invalid_grant, and the family ends revoked', async () => {
        const { tokens } = await authorizeWithOpenIdClient(rp, credentials);
        const results = await Promise.allSettled(Array.from({ length: 5 }, () => client.refreshTokenGrant(rp.config, tokens.refresh_token!)));
        const won = results.filter((r): r is PromiseFulfilledResult<Awaited<ReturnType<typeof client.refreshTokenGrant>>> => r.status === 'fulfilled');
        expect(won, 'successful refreshes').to.have.length(1);
        for (const r of results) {
          if (r.status === 'rejected') await oauthError(Promise.reject(r.reason), 'invalid_grant');
        }
        // Concurrent use looks like replay (spec): even the winner's new token is dead.
        await oauthError(client.refreshTokenGrant(rp.config, won[0]!.value.refresh_token!), 'invalid_grant');
      });
    });
  }

  it('openid-client refuses a callback whose iss or state is not the expected one, before any token request', async () => {
    const rp = await discoverRelyingParty(issuer, publicApp, 'none');
    const { url, verifier, state } = await authorizationRequest(rp, { scope: 'openid' });
    const callback = await followAuthorization(new Browser(issuer), url, rp.redirectUri, credentials);
    const tampered = (name: string, value: string) => {
      const u = new URL(callback);
      u.searchParams.set(name, value);
      return u;
    };
    const tokenRequests = () => sentTo(rp, rp.config.serverMetadata().token_endpoint).length;

    for (const [name, value] of [
      ['iss', 'https://attacker.example.test'],
      ['state', 'not-the-state'],
    ] as const) {
      let caught: unknown;
      try {
        await client.authorizationCodeGrant(rp.config, tampered(name, value), { pkceCodeVerifier: verifier, expectedState: state });
      } catch (e) {
        caught = e;
      }
      expect(caught, `a wrong ${name} is refused`).to.be.instanceOf(client.ClientError);
      // The refusal names the parameter, so it is this check that fired and not another.
      expect(String((caught as client.ClientError).cause)).to.include(`unexpected "${name}"`);
    }
    expect(tokenRequests()).to.equal(0);
    // The genuine callback still works: the refusals above were about the tampering alone.
    const tokens = await client.authorizationCodeGrant(rp.config, callback, { pkceCodeVerifier: verifier, expectedState: state, idTokenExpected: true });
    expect(tokens.claims()?.sub).to.equal(String(user.userId));
  });

  describe('introspection (confidential clients)', () => {
    for (const auth of ['client_secret_basic', 'client_secret_post'] as const) {
      it(`client.tokenIntrospection with ${auth}: active for its own tokens with sub, client_id and scope; {active:false} for another client's and after revocation`, async () => {
        const rp = await discoverRelyingParty(issuer, confidentialApp, auth);
        const own = await authorizeWithOpenIdClient(rp, credentials, { scope: 'openid offline_access passes:read' });

        const access = await client.tokenIntrospection(rp.config, own.tokens.access_token);
        expect(access).to.deep.include({
          active: true,
          sub: String(user.userId),
          client_id: confidentialApp.clientId,
          scope: 'openid offline_access passes:read',
          token_type: 'Bearer',
        });
        const refresh = await client.tokenIntrospection(rp.config, own.tokens.refresh_token!);
        expect(refresh).to.deep.include({ active: true, sub: String(user.userId), client_id: confidentialApp.clientId, scope: 'openid offline_access passes:read' });

        // Another client's tokens (same user, same organization) are none of this client's business.
        const publicRp = await discoverRelyingParty(issuer, otherPublicApp, 'none');
        const foreign = await authorizeWithOpenIdClient(publicRp, credentials);
        expect(await client.tokenIntrospection(rp.config, foreign.tokens.access_token)).to.deep.equal({ active: false });
        expect(await client.tokenIntrospection(rp.config, foreign.tokens.refresh_token!)).to.deep.equal({ active: false });

        await client.tokenRevocation(rp.config, own.tokens.refresh_token!);
        expect(await client.tokenIntrospection(rp.config, own.tokens.refresh_token!)).to.deep.equal({ active: false });
        // Revoking the refresh token revokes its family, which the access token belongs to.
        expect(await client.tokenIntrospection(rp.config, own.tokens.access_token)).to.deep.equal({ active: false });

        const introspections = sentTo(rp, rp.config.serverMetadata().introspection_endpoint);
        expect(introspections).to.have.length(6);
        for (const r of introspections) {
          const basic = basicCredentials(r.headers.get('authorization'));
          if (auth === 'client_secret_basic') expect(basic?.id).to.equal(confidentialApp.clientId);
          else expect(r.form?.get('client_secret')).to.equal(confidentialApp.clientSecret);
        }
      });
    }

    it('a public client cannot introspect: invalid_client (401)', async () => {
      const rp = await discoverRelyingParty(issuer, publicApp, 'none');
      const { tokens } = await authorizeWithOpenIdClient(rp, credentials);
      await oauthError(client.tokenIntrospection(rp.config, tokens.access_token), 'invalid_client', 401);
    });
  });

  describe('logout', () => {
    /** A silent authorization (prompt=none) in the browser; resolves with openid-client's outcome. */
    async function silentAuthorization(rp: RelyingParty, browser: Browser) {
      const { url, verifier, state } = await authorizationRequest(rp, { scope: 'openid', prompt: 'none' });
      const res = await browser.get(url.href);
      expect(res.status, res.text).to.equal(302);
      expect(res.location?.startsWith(`${rp.redirectUri}?`), `redirected to the client: ${res.location}`).to.equal(true);
      return client.authorizationCodeGrant(rp.config, new URL(res.location!), { pkceCodeVerifier: verifier, expectedState: state }).then(
        (tokens) => ({ ok: true as const, tokens }),
        (error: unknown) => ({ ok: false as const, error }),
      );
    }

    it('client.buildEndSessionUrl with id_token_hint, post_logout_redirect_uri and state: back at the registered URI with state, and the web session is over (prompt=none → login_required)', async () => {
      const rp = await discoverRelyingParty(issuer, publicApp, 'none');
      const { tokens, browser } = await authorizeWithOpenIdClient(rp, credentials);
      // While signed in, a silent authorization gets a code: the session is what logout must end.
      const whileSignedIn = await silentAuthorization(rp, browser);
      expect(whileSignedIn.ok, 'silent authorization while signed in').to.equal(true);

      const state = client.randomState();
      const endSession = client.buildEndSessionUrl(rp.config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: signedOutUri, state });
      expect(endSession.origin + endSession.pathname).to.equal(rp.config.serverMetadata().end_session_endpoint);
      expect(decodeJwt(endSession.searchParams.get('id_token_hint')!).sub).to.equal(String(user.userId));
      const res = await browser.get(endSession.href);
      expect(res.status).to.equal(302);
      const back = new URL(res.location!);
      expect(back.origin + back.pathname).to.equal(signedOutUri);
      expect([...back.searchParams]).to.deep.equal([['state', state]]);

      const afterLogout = await silentAuthorization(rp, browser);
      expect(afterLogout.ok, 'silent authorization after logout').to.equal(false);
      const error = (afterLogout as { error: unknown }).error;
      expect(error).to.be.instanceOf(client.AuthorizationResponseError);
      expect((error as client.AuthorizationResponseError).error).to.equal('login_required');
    });
  });
});
