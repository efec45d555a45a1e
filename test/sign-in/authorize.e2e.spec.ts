// GET /api/oauth/authorize end to end: every error row of the spec, malformed input of every
// parameter, prompt and max_age, remembered consent, the organization rule, and the code.
import { expect } from 'chai';
import { startStack, type Stack } from '../support/stack.js';
import { oauthStreams } from '../../shared/oauth/oauth-events.js';
import { mintIdToken } from '../../shared/oauth/tokens.js';
import { SignJWT, generateKeyPair } from 'jose';
import { Browser, csrfTokenOf, inputValue } from './support/browser.js';
import { authorizeInBrowser, authorizePath, signInAndAuthorize, submitConsent, submitPassword, type AuthorizeOptions } from './support/sign-in-driver.js';
import { codeIssued, pkce, sessionEnd, sessionEvents, signedInBrowser, startedSession } from './support/session-probe.js';

describe('GET /api/oauth/authorize', function () {
  this.timeout(120_000);
  let stack: Stack;
  let orgId: number;
  let user: { userId: number; email: string; password: string };
  let client: { clientId: string; redirectUri: string };
  let narrowClient: { clientId: string; redirectUri: string };

  before(async () => {
    stack = await startStack({ label: 'signin_authorize' });
    ({ orgId } = await stack.seed.tenant());
    const u = await stack.seed.user(orgId);
    user = { userId: u.userId, email: u.email, password: u.password! };
    client = await stack.seed.client(orgId, { name: 'Door App' });
    narrowClient = await stack.seed.client(orgId, { allowedScopes: ['openid', 'profile'], redirectUris: ['https://narrow.example.test/cb', 'http://127.0.0.1/native/cb'] });
  });
  after(async () => {
    await stack?.stop();
  });

  const { challenge } = pkce();
  const base = (overrides: Partial<AuthorizeOptions> = {}): AuthorizeOptions => ({
    clientId: client.clientId,
    redirectUri: client.redirectUri,
    scope: 'openid profile',
    codeChallenge: challenge,
    state: 'st-1',
    nonce: 'n-1',
    ...overrides,
  });
  const flow = (overrides: Partial<AuthorizeOptions> & { browser?: Browser; consent?: 'allow' | 'deny' } = {}) =>
    authorizeInBrowser(stack, { ...base(overrides), email: user.email, password: user.password, browser: overrides.browser, consent: overrides.consent });

  /** The error redirect's parameters, after checking it goes to the client's redirect_uri. */
  function errorOf(location: string | null, redirectUri = client.redirectUri): URLSearchParams {
    expect(location, 'a Location').to.be.a('string');
    expect(location!.startsWith(`${redirectUri}?`), location!).to.equal(true);
    return new URL(location!).searchParams;
  }

  describe('an invalid client_id / redirect_uri pair: 400 JSON, never a redirect', () => {
    const rows: Array<[string, (p: URLSearchParams) => void]> = [
      ['client_id missing', (p) => p.delete('client_id')],
      ['client_id empty', (p) => p.set('client_id', '')],
      ['client_id malformed', (p) => p.set('client_id', 'svc_<script>')],
      ['client_id unknown', (p) => p.set('client_id', `svc_${'0'.repeat(32)}`)],
      ['client_id repeated', (p) => p.append('client_id', client.clientId)],
      ['redirect_uri missing', (p) => p.delete('redirect_uri')],
      ['redirect_uri not registered', (p) => p.set('redirect_uri', 'https://evil.example/callback')],
      ['redirect_uri differs by a trailing slash', (p) => p.set('redirect_uri', `${client.redirectUri}/`)],
      ['redirect_uri differs in case', (p) => p.set('redirect_uri', client.redirectUri.toUpperCase())],
      ['redirect_uri with an extra query', (p) => p.set('redirect_uri', `${client.redirectUri}?x=1`)],
      ['redirect_uri repeated', (p) => p.append('redirect_uri', client.redirectUri)],
      ['redirect_uri of another client', (p) => p.set('redirect_uri', narrowClient.redirectUri)],
    ];
    for (const [name, change] of rows) {
      it(name, async () => {
        const params = new URLSearchParams(authorizePath(base()).split('?')[1]);
        change(params);
        const res = await new Browser(stack.baseUrl).get(`/api/oauth/authorize?${params}`);
        expect(res.status).to.equal(400);
        expect(res.location).to.equal(null);
        expect(res.headers.get('content-type')).to.match(/^application\/json/);
        expect(res.headers.get('cache-control')).to.equal('no-store');
        const body = JSON.parse(res.text);
        expect(body).to.have.keys(['error', 'error_description']);
        expect(body.error).to.equal('invalid_request');
      });
    }
  });

  describe('errors after the client is known: 302 to the redirect_uri with error, state and iss', () => {
    const rows: Array<[string, (p: URLSearchParams) => void, string]> = [
      ['response_type missing', (p) => p.delete('response_type'), 'invalid_request'],
      ['response_type token', (p) => p.set('response_type', 'token'), 'unsupported_response_type'],
      ['response_type "code id_token"', (p) => p.set('response_type', 'code id_token'), 'unsupported_response_type'],
      ['response_type repeated', (p) => p.append('response_type', 'code'), 'invalid_request'],
      ['response_mode fragment', (p) => p.set('response_mode', 'fragment'), 'invalid_request'],
      ['scope unknown', (p) => p.set('scope', 'openid admin'), 'invalid_scope'],
      ['scope malformed (double space)', (p) => p.set('scope', 'openid  profile'), 'invalid_scope'],
      ['scope with a quote', (p) => p.set('scope', 'openid "profile"'), 'invalid_scope'],
      ['code_challenge missing', (p) => p.delete('code_challenge'), 'invalid_request'],
      ['code_challenge too short', (p) => p.set('code_challenge', 'abc'), 'invalid_request'],
      ['code_challenge with bad characters', (p) => p.set('code_challenge', `${'a'.repeat(42)}=`), 'invalid_request'],
      ['code_challenge_method missing', (p) => p.delete('code_challenge_method'), 'invalid_request'],
      ['code_challenge_method plain', (p) => p.set('code_challenge_method', 'plain'), 'invalid_request'],
      ['code_challenge_method lower-case s256', (p) => p.set('code_challenge_method', 's256'), 'invalid_request'],
      ['prompt unknown (select_account)', (p) => p.set('prompt', 'select_account'), 'invalid_request'],
      ['prompt none with login', (p) => p.set('prompt', 'none login'), 'invalid_request'],
      ['prompt repeated value', (p) => p.set('prompt', 'login login'), 'invalid_request'],
      ['max_age negative', (p) => p.set('max_age', '-1'), 'invalid_request'],
      ['max_age not a number', (p) => p.set('max_age', '1e3'), 'invalid_request'],
      ['max_age too large', (p) => p.set('max_age', '99999999999'), 'invalid_request'],
      ['nonce too long', (p) => p.set('nonce', 'n'.repeat(513)), 'invalid_request'],
      ['nonce with a control character', (p) => p.set('nonce', 'a\u0001b'), 'invalid_request'],
      ['request object', (p) => p.set('request', 'eyJhbGciOiJub25lIn0.e30.'), 'request_not_supported'],
      ['request_uri', (p) => p.set('request_uri', 'https://app.example.test/req'), 'request_uri_not_supported'],
      ['nonce repeated', (p) => p.append('nonce', 'again'), 'invalid_request'],
    ];
    for (const [name, change, error] of rows) {
      it(`${name}: ${error}`, async () => {
        const params = new URLSearchParams(authorizePath(base({ state: 'opaque state/+?&=' })).split('?')[1]);
        change(params);
        const res = await new Browser(stack.baseUrl).get(`/api/oauth/authorize?${params}`);
        expect(res.status).to.equal(302);
        expect(res.headers.get('cache-control')).to.equal('no-store');
        const p = errorOf(res.location);
        expect(p.get('error')).to.equal(error);
        expect(p.get('error_description')).to.be.a('string').and.not.equal('');
        expect(p.get('state')).to.equal('opaque state/+?&=');
        expect(p.get('iss')).to.equal(stack.baseUrl);
        expect(p.has('code')).to.equal(false);
      });
    }

    it('a scope the client may not have: invalid_scope', async () => {
      const res = await new Browser(stack.baseUrl).get(authorizePath(base({ clientId: narrowClient.clientId, redirectUri: narrowClient.redirectUri, scope: 'openid passes:read' })));
      expect(errorOf(res.location, narrowClient.redirectUri).get('error')).to.equal('invalid_scope');
    });

    it('a state too long or with control characters is invalid_request, reported without a state it cannot echo faithfully', async () => {
      const long = await new Browser(stack.baseUrl).get(authorizePath(base({ state: 's'.repeat(2049) })));
      expect(errorOf(long.location).get('error')).to.equal('invalid_request');
      const repeated = new URLSearchParams(authorizePath(base()).split('?')[1]);
      repeated.append('state', 'other');
      const res = await new Browser(stack.baseUrl).get(`/api/oauth/authorize?${repeated}`);
      const p = errorOf(res.location);
      expect(p.get('error')).to.equal('invalid_request');
      expect(p.has('state')).to.equal(false);
      expect(p.get('iss')).to.equal(stack.baseUrl);
    });

    it('keeps the registered redirect_uri exactly, including a loopback port chosen by a native app', async () => {
      const res = await new Browser(stack.baseUrl).get(
        authorizePath(base({ clientId: narrowClient.clientId, redirectUri: 'http://127.0.0.1:53123/native/cb', prompt: 'none', scope: 'openid' })),
      );
      const p = errorOf(res.location, 'http://127.0.0.1:53123/native/cb');
      expect(p.get('error')).to.equal('login_required');
    });
  });

  describe('the interaction', () => {
    it('without a session: 302 to the sign-in page, keeping the request in a sealed HttpOnly cookie', async () => {
      const browser = new Browser(stack.baseUrl);
      const res = await browser.get(authorizePath(base()));
      expect(res.status).to.equal(302);
      expect(res.location).to.equal('/signin');
      const flowCookie = res.setCookies.find((c) => c.name === 'gp_authz');
      expect(flowCookie?.attributes).to.include({ httponly: true, secure: true, samesite: 'Lax', path: '/' });
      expect(flowCookie?.value).to.not.include(client.clientId);
    });

    it('password sign-in, consent, then a code with state and iss; the code records the session and request', async () => {
      const result = await flow({ state: 'full-flow', nonce: 'nonce-full' });
      expect(result.hops.map((h) => h.split('?')[0])).to.deep.equal([
        '/api/oauth/authorize',
        '/signin',
        '/api/oauth/authorize',
        '/consent',
        '/api/oauth/authorize',
        client.redirectUri,
      ]);
      expect(result.callback.searchParams.get('state')).to.equal('full-flow');
      expect(result.callback.searchParams.get('iss')).to.equal(stack.baseUrl);
      expect(result.code).to.match(/^[A-Za-z0-9_-]{43}$/);
      const session = await startedSession(stack, result.browser);
      expect(session.amr).to.deep.equal(['pwd']);
      const issued = await codeIssued(stack, result.code);
      expect(issued?.data).to.deep.include({
        nonce: 'nonce-full',
        clientId: client.clientId,
        userId: user.userId,
        orgId,
        scopes: ['openid', 'profile'],
        amr: ['pwd'],
        sid: session.sid,
        redirectUri: client.redirectUri,
        codeChallenge: challenge,
        authTime: session.authTime,
      });
      expect(issued?.metadata.actor).to.deep.equal({ kind: 'user', id: user.userId });
      // The flow is over: its cookie is gone.
      expect(result.browser.jar.get('gp_authz')).to.equal(undefined);
      const consents = await stack.store.readStream(oauthStreams.consents(user.userId));
      expect(consents.map((e) => e.data)).to.deep.include({ userId: user.userId, clientId: client.clientId, scopes: ['openid', 'profile'] });
    });

    it('signInAndAuthorize (the helper other suites use) returns a code issued to the user for the request', async () => {
      const other = await stack.seed.user(orgId);
      const code = await signInAndAuthorize(stack, { ...base({ state: 'helper', nonce: 'helper-nonce' }), email: other.email, password: other.password! });
      expect((await codeIssued(stack, code))?.data).to.deep.include({ userId: other.userId, nonce: 'helper-nonce', clientId: client.clientId });
    });

    it('a malformed login_hint is dropped, not an error', async () => {
      const browser = new Browser(stack.baseUrl);
      const res = await browser.get(authorizePath(base({ extra: { login_hint: `${'x'.repeat(300)}@example.com` } })));
      expect(res.location).to.equal('/signin');
      expect(inputValue((await browser.get('/signin')).text, 'email')).to.equal('');
    });

    it('remembers consent: the next request for the same scopes skips the page; more scopes or prompt=consent ask again', async () => {
      const first = await flow({ state: 'a' });
      const browser = first.browser;
      const again = await flow({ browser, state: 'b' });
      expect(again.hops).to.have.length(2);
      const page = await browser.get(authorizePath(base({ scope: 'openid profile email', state: 'c' })));
      expect(page.location).to.equal('/consent');
      const consentPage = await browser.get('/consent');
      expect(consentPage.text).to.include('Your email address');
      const forced = await browser.get(authorizePath(base({ prompt: 'consent', state: 'd' })));
      expect(forced.location).to.equal('/consent');
      const done = await flow({ browser, prompt: 'consent', state: 'd' });
      expect(done.hops.map((h) => h.split('?')[0])).to.deep.equal(['/api/oauth/authorize', '/consent', '/api/oauth/authorize', client.redirectUri]);
    });

    it('a consent given for one request does not satisfy prompt=consent of another', async () => {
      const { browser } = await flow({ state: 'e' });
      const afterConsent = await submitConsentFor(browser, base({ prompt: 'consent', state: 'f' }));
      expect(afterConsent).to.match(/^\/api\/oauth\/authorize\?.*state=f/);
      // Another request (other state) with prompt=consent still shows the page.
      const other = await browser.get(authorizePath(base({ prompt: 'consent', state: 'g' })));
      expect(other.location).to.equal('/consent');
    });

    it('prompt=none: login_required without a session, consent_required without consent, a code otherwise', async () => {
      const anonymous = await new Browser(stack.baseUrl).get(authorizePath(base({ prompt: 'none', state: 'pn' })));
      const p1 = errorOf(anonymous.location);
      expect(p1.get('error')).to.equal('login_required');
      expect(p1.get('state')).to.equal('pn');
      expect(p1.get('iss')).to.equal(stack.baseUrl);
      expect(anonymous.setCookies.find((c) => c.name === 'gp_authz')).to.equal(undefined);

      const browser = await signedInBrowser(stack, user.email, user.password);
      const noConsent = await browser.get(authorizePath(base({ prompt: 'none', scope: 'openid passes:read', state: 'pc' })));
      const p2 = errorOf(noConsent.location);
      expect(p2.get('error')).to.equal('consent_required');
      expect(p2.get('state')).to.equal('pc');

      await flow({ browser, state: 'grant' });
      const silent = await browser.get(authorizePath(base({ prompt: 'none', state: 'ok' })));
      const p3 = errorOf(silent.location);
      expect(p3.get('code')).to.be.a('string');
      expect(p3.get('state')).to.equal('ok');
      expect(p3.get('iss')).to.equal(stack.baseUrl);
    });

    it('id_token_hint: a code for the user it names; another user signs in again, or gets login_required; a forged hint is invalid_request', async () => {
      const hintFor = async (userId: number, issuedAt = new Date()) =>
        mintIdToken(await stack.oauth.signingKeys.current(issuedAt), {
          issuer: stack.baseUrl,
          subject: String(userId),
          clientId: client.clientId,
          nonce: null,
          authTime: issuedAt.toISOString(),
          amr: ['pwd'],
          sid: 'sid-of-an-earlier-session',
          now: issuedAt,
        });
      const { browser } = await flow({ state: 'h0' });
      const withHint = (hint: string, prompt?: string) => browser.get(authorizePath(base({ prompt, state: 'h', extra: { id_token_hint: hint } })));

      // Expired a day ago: a hint only names the user.
      const own = errorOf((await withHint(await hintFor(user.userId, new Date(Date.now() - 86_400_000)), 'none')).location);
      expect(own.get('code')).to.be.a('string');

      const other = await stack.seed.user(orgId);
      const silent = errorOf((await withHint(await hintFor(other.userId), 'none')).location);
      expect(silent.get('error')).to.equal('login_required');
      expect((await withHint(await hintFor(other.userId))).location).to.equal('/signin');
      // Signing in as the user it does not name, for this very request: login_required, no loop.
      const signedInAsWrongUser = await submitPassword(browser, user.email, user.password);
      const wrong = await browser.get(signedInAsWrongUser);
      expect(errorOf(wrong.location).get('error')).to.equal('login_required');
      // Signing in as the user it names: the code, for that user.
      const named = await authorizeInBrowser(stack, {
        ...base({ state: 'h2', extra: { id_token_hint: await hintFor(other.userId) } }),
        email: other.email,
        password: other.password!,
        browser,
      });
      expect(named.hops.map((h) => h.split('?')[0])).to.deep.equal(['/api/oauth/authorize', '/signin', '/api/oauth/authorize', '/consent', '/api/oauth/authorize', client.redirectUri]);
      expect((await codeIssued(stack, named.code))?.data).to.include({ userId: other.userId });

      // Signed with a key no longer in the key set (rotated out): no hint at all, not an error.
      const retired = await generateKeyPair('RS256');
      const unverifiable = await new SignJWT({ iss: stack.baseUrl, sub: String(user.userId), aud: client.clientId })
        .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: 'rotated-out' })
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(retired.privateKey);
      expect(errorOf((await withHint(unverifiable, 'none')).location).get('code')).to.be.a('string');

      const [header, payload] = (await hintFor(user.userId)).split('.');
      const forged = errorOf((await withHint(`${header}.${payload}.${'A'.repeat(342)}`, 'none')).location);
      expect(forged.get('error')).to.equal('invalid_request');
      expect(errorOf((await withHint('not-a-jwt')).location).get('error')).to.equal('invalid_request');
    });

    it('prompt=login forces a fresh sign-in even with a session, then issues the code (no loop) and replaces the session', async () => {
      const { browser } = await flow({ state: 'pl0' });
      const before = await startedSession(stack, browser);
      const res = await browser.get(authorizePath(base({ prompt: 'login', state: 'pl' })));
      expect(res.location).to.equal('/signin');
      const result = await flow({ browser, prompt: 'login', state: 'pl' });
      expect(result.hops.map((h) => h.split('?')[0])).to.deep.equal(['/api/oauth/authorize', '/signin', '/api/oauth/authorize', client.redirectUri]);
      const after = await startedSession(stack, browser);
      expect(after.sid).to.not.equal(before.sid);
      expect(await sessionEnd(stack, before.sessionHash)).to.deep.include({ reason: 'replaced' });
    });

    it('a sign-in made for one prompt=login request does not count for another one', async () => {
      const browser = new Browser(stack.baseUrl);
      await browser.get(authorizePath(base({ prompt: 'login', state: 'one' })));
      const next = await submitPassword(browser, user.email, user.password);
      expect(next).to.match(/state=one/);
      const other = await browser.get(authorizePath(base({ prompt: 'login', state: 'two' })));
      expect(other.location).to.equal('/signin');
    });

    it('max_age=0 forces a sign-in and then issues the code; a recent enough session satisfies max_age', async () => {
      const { browser } = await flow({ state: 'm0' });
      const zero = await browser.get(authorizePath(base({ maxAge: 0, state: 'm1' })));
      expect(zero.location).to.equal('/signin');
      const result = await flow({ browser, maxAge: 0, state: 'm1' });
      expect(result.hops.map((h) => h.split('?')[0])).to.deep.equal(['/api/oauth/authorize', '/signin', '/api/oauth/authorize', client.redirectUri]);
      const hour = await browser.get(authorizePath(base({ maxAge: 3600, state: 'm2' })));
      expect(errorOf(hour.location).get('code')).to.be.a('string');
      const silent = await browser.get(authorizePath(base({ maxAge: 0, prompt: 'none', state: 'm3' })));
      expect(errorOf(silent.location).get('error')).to.equal('login_required');
    });

    it('Deny on the consent page: access_denied with state and iss, nothing remembered', async () => {
      const other = await stack.seed.user(orgId);
      const browser = new Browser(stack.baseUrl);
      await browser.get(authorizePath(base({ state: 'deny-me' })));
      await submitPassword(browser, other.email, other.password!);
      await browser.get(authorizePath(base({ state: 'deny-me' })));
      const location = await submitConsent(browser, 'deny');
      const p = errorOf(location);
      expect(p.get('error')).to.equal('access_denied');
      expect(p.get('state')).to.equal('deny-me');
      expect(p.get('iss')).to.equal(stack.baseUrl);
      expect(await stack.store.readStream(oauthStreams.consents(other.userId))).to.deep.equal([]);
      expect(browser.jar.get('gp_authz')).to.equal(undefined);
    });

    it('an Allow for a request no longer in progress records nothing and shows the current request', async () => {
      const browser = await signedInBrowser(stack, user.email, user.password);
      await browser.get(authorizePath(base({ scope: 'openid invites:read', state: 'first' })));
      const page = await browser.get('/consent');
      const staleRequest = inputValue(page.text, 'request')!;
      // Another tab starts a newer authorization needing consent.
      await browser.get(authorizePath(base({ scope: 'openid members:read', state: 'second' })));
      const before = (await stack.store.readStream(oauthStreams.consents(user.userId))).length;
      const res = await browser.post('/consent', { csrf: csrfTokenOf(page.text), request: staleRequest, decision: 'allow' });
      expect(res.status).to.equal(302);
      expect(res.location).to.match(/state=second/);
      expect((await stack.store.readStream(oauthStreams.consents(user.userId))).length).to.equal(before);
    });

    it('a user of another organization is refused: access_denied to the client, no code', async () => {
      const otherOrg = await stack.seed.organization();
      const stranger = await stack.seed.user(otherOrg);
      const browser = new Browser(stack.baseUrl);
      await browser.get(authorizePath(base({ state: 'foreign' })));
      const next = await submitPassword(browser, stranger.email, stranger.password!);
      const res = await browser.get(next);
      const p = errorOf(res.location);
      expect(p.get('error')).to.equal('access_denied');
      expect(p.get('state')).to.equal('foreign');
      expect(p.has('code')).to.equal(false);
    });

    it('the consent page shows the client name and each scope, and needs a request in progress', async () => {
      const browser = await signedInBrowser(stack, user.email, user.password);
      await browser.get(authorizePath(base({ scope: 'openid passes:write', state: 'show' })));
      const page = await browser.get('/consent');
      expect(page.status).to.equal(200);
      expect(page.text).to.include('Allow Door App to use your account?');
      expect(page.text).to.include('Verify your identity');
      expect(page.text).to.include('Create and revoke your guest passes');
      expect(page.text).to.include(user.email);
      const none = await new Browser(stack.baseUrl).get('/consent');
      expect(none.status).to.equal(400);
      expect(none.headers.get('content-type')).to.match(/^text\/html/);
    });

    it('consent without CSRF token: 403, nothing recorded', async () => {
      const browser = await signedInBrowser(stack, user.email, user.password);
      await browser.get(authorizePath(base({ scope: 'openid invites:read', state: 'csrf' })));
      const page = await browser.get('/consent');
      const before = (await stack.store.readStream(oauthStreams.consents(user.userId))).length;
      const res = await browser.post('/consent', { request: inputValue(page.text, 'request')!, decision: 'allow' });
      expect(res.status).to.equal(403);
      expect((await stack.store.readStream(oauthStreams.consents(user.userId))).length).to.equal(before);
    });

    it('a session cookie that names no session is no session', async () => {
      const browser = new Browser(stack.baseUrl);
      browser.jar.set('gp_session', 'A'.repeat(43));
      const res = await browser.get(authorizePath(base({ prompt: 'none' })));
      expect(errorOf(res.location).get('error')).to.equal('login_required');
      expect(await sessionEvents(stack, browser)).to.deep.equal([]);
    });
  });

  it('429 with Retry-After once a source IP has used up its authorize requests', async () => {
    const gateway = await stack.serve({ trustProxy: true });
    try {
      const headers = { 'X-Forwarded-For': '198.51.100.23' };
      const browser = new Browser(gateway.baseUrl);
      // Malformed requests are cheap and count like any other.
      for (let i = 0; i < 300; i++) {
        const res = await browser.get('/api/oauth/authorize', { headers });
        expect(res.status).to.equal(400);
      }
      const limited = await browser.get('/api/oauth/authorize', { headers });
      expect(limited.status).to.equal(429);
      expect(Number(limited.headers.get('retry-after'))).to.be.greaterThan(0);
      expect(JSON.parse(limited.text)).to.deep.include({ error: 'temporarily_unavailable' });
      const otherIp = await browser.get('/api/oauth/authorize', { headers: { 'X-Forwarded-For': '198.51.100.24' } });
      expect(otherIp.status).to.equal(400);
    } finally {
      await gateway.close();
    }
  });

  async function submitConsentFor(browser: Browser, options: AuthorizeOptions): Promise<string> {
    const res = await browser.get(authorizePath(options));
    expect(res.location).to.equal('/consent');
    return submitConsent(browser, 'allow');
  }
});
