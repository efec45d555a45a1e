// GET and POST /api/oauth/logout end to end, row by row of the spec: the session ends only for a
// verified hint naming the signed-in user (and session), the browser goes to a registered
// post-logout URI with state or else home, always 302.
import { expect } from 'chai';
import { SignJWT, generateKeyPair } from 'jose';
import { startStack, type Stack } from '../support/stack.js';
import { mintAccessToken, mintIdToken } from '../../shared/oauth/tokens.js';
import { Browser } from './support/browser.js';
import { authorizePath } from './support/sign-in-driver.js';
import { pkce, sessionEnd, signedInBrowser, startedSession } from './support/session-probe.js';

describe('GET and POST /api/oauth/logout', function () {
  this.timeout(120_000);
  let stack: Stack;
  let orgId: number;
  let user: { userId: number; email: string; password: string };
  let client: { clientId: string; redirectUri: string };
  let otherClient: { clientId: string; redirectUri: string };
  const signedOut = 'https://app.example.test/signed-out';

  before(async () => {
    stack = await startStack({ label: 'signin_logout' });
    ({ orgId } = await stack.seed.tenant());
    const u = await stack.seed.user(orgId);
    user = { userId: u.userId, email: u.email, password: u.password! };
    client = await stack.seed.client(orgId);
    otherClient = await stack.seed.client(orgId, { redirectUris: ['https://other.example.test/cb'], postLogoutRedirectUris: ['https://other.example.test/bye'] });
  });
  after(async () => {
    await stack?.stop();
  });

  /** An id_token of ours, as the token endpoint issues it for this session. */
  async function idToken(input: { userId: number; sid: string; clientId?: string; issuedAt?: Date }): Promise<string> {
    const now = input.issuedAt ?? new Date();
    return mintIdToken(await stack.oauth.signingKeys.current(now), {
      issuer: stack.baseUrl,
      subject: String(input.userId),
      clientId: input.clientId ?? client.clientId,
      nonce: null,
      authTime: now.toISOString(),
      amr: ['pwd'],
      sid: input.sid,
      now,
    });
  }

  /** An id_token signed with our key but without a `sid` claim (a hint need not carry one). */
  async function idTokenWithoutSid(userId: number): Promise<string> {
    const key = await stack.oauth.signingKeys.current();
    return new SignJWT({ iss: stack.baseUrl, sub: String(userId), aud: client.clientId })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: key.kid })
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(key.privateKey);
  }

  async function signedIn() {
    const browser = await signedInBrowser(stack, user.email, user.password);
    const session = await startedSession(stack, browser);
    return { browser, session };
  }

  const query = (params: Record<string, string>) => `/api/oauth/logout?${new URLSearchParams(params)}`;

  /** Still signed in: the account page answers 200. */
  const stillSignedIn = async (browser: Browser) => (await browser.get('/account')).status === 200;

  it('a valid hint for the signed-in session: the session ends, the cookie is cleared, back to the registered URI with state', async () => {
    const { browser, session } = await signedIn();
    const hint = await idToken({ userId: user.userId, sid: session.sid });
    const res = await browser.get(query({ id_token_hint: hint, post_logout_redirect_uri: signedOut, state: 'bye state&=' }));
    expect(res.status).to.equal(302);
    expect(res.location).to.equal(`${signedOut}?state=bye%20state%26%3D`);
    expect(res.headers.get('cache-control')).to.equal('no-store');
    const cleared = res.setCookies.find((c) => c.name === 'gp_session');
    expect(cleared?.value).to.equal('');
    expect(cleared?.attributes['max-age']).to.equal('0');
    expect(await sessionEnd(stack, session.sessionHash)).to.deep.equal({ sessionHash: session.sessionHash, sid: session.sid, reason: 'logout' });
    expect(await stillSignedIn(browser)).to.equal(false);
    // A silent authorization now needs a sign-in.
    const silent = await browser.get(authorizePath({ clientId: client.clientId, redirectUri: client.redirectUri, codeChallenge: pkce().challenge, prompt: 'none' }));
    expect(new URL(silent.location!).searchParams.get('error')).to.equal('login_required');
  });

  it('POST with a form body behaves as GET', async () => {
    const { browser, session } = await signedIn();
    const hint = await idToken({ userId: user.userId, sid: session.sid });
    const res = await browser.post('/api/oauth/logout', { id_token_hint: hint, post_logout_redirect_uri: signedOut, state: 's', client_id: client.clientId });
    expect(res.status).to.equal(302);
    expect(res.location).to.equal(`${signedOut}?state=s`);
    expect(await sessionEnd(stack, session.sessionHash)).to.deep.include({ reason: 'logout' });
  });

  it('an expired but correctly signed hint works', async () => {
    const { browser, session } = await signedIn();
    const hint = await idToken({ userId: user.userId, sid: session.sid, issuedAt: new Date(Date.now() - 3 * 60 * 60 * 1000) });
    const res = await browser.get(query({ id_token_hint: hint, post_logout_redirect_uri: signedOut }));
    expect(res.location).to.equal(signedOut);
    expect(await sessionEnd(stack, session.sessionHash)).to.deep.include({ reason: 'logout' });
  });

  it('a post_logout_redirect_uri not registered for the client: home page (the session still ends)', async () => {
    for (const uri of ['https://evil.example/bye', `${signedOut}/`, 'https://APP.example.test/signed-out', 'https://other.example.test/bye']) {
      const { browser, session } = await signedIn();
      const res = await browser.get(query({ id_token_hint: await idToken({ userId: user.userId, sid: session.sid }), post_logout_redirect_uri: uri, state: 's' }));
      expect(res.status, uri).to.equal(302);
      expect(res.location, uri).to.equal('/');
      expect(await sessionEnd(stack, session.sessionHash)).to.deep.include({ reason: 'logout' });
    }
    const home = await new Browser(stack.baseUrl).get('/');
    expect(home.status).to.equal(200);
    expect(home.headers.get('cache-control')).to.equal('no-store');
  });

  it('a hint without sid ends the session of its user', async () => {
    const { browser, session } = await signedIn();
    const res = await browser.get(query({ id_token_hint: await idTokenWithoutSid(user.userId), post_logout_redirect_uri: signedOut }));
    expect(res.location).to.equal(signedOut);
    expect(await sessionEnd(stack, session.sessionHash)).to.deep.include({ reason: 'logout' });
  });

  it('a hint for another user does not end the session', async () => {
    const { browser, session } = await signedIn();
    const someoneElse = await stack.seed.user(orgId);
    const res = await browser.get(query({ id_token_hint: await idToken({ userId: someoneElse.userId, sid: session.sid }), post_logout_redirect_uri: signedOut }));
    expect(res.status).to.equal(302);
    expect(await sessionEnd(stack, session.sessionHash)).to.equal(undefined);
    expect(await stillSignedIn(browser)).to.equal(true);
  });

  it('a hint of the same user for another session does not end this one', async () => {
    const { browser, session } = await signedIn();
    const res = await browser.get(query({ id_token_hint: await idToken({ userId: user.userId, sid: 'some_other_session_sid' }) }));
    expect(res.location).to.equal('/');
    expect(await sessionEnd(stack, session.sessionHash)).to.equal(undefined);
    expect(await stillSignedIn(browser)).to.equal(true);
  });

  it('client_id that is not the hint audience: nothing ends, home page', async () => {
    const { browser, session } = await signedIn();
    const hint = await idToken({ userId: user.userId, sid: session.sid });
    const res = await browser.get(query({ id_token_hint: hint, client_id: otherClient.clientId, post_logout_redirect_uri: 'https://other.example.test/bye', state: 's' }));
    expect(res.location).to.equal('/');
    expect(await sessionEnd(stack, session.sessionHash)).to.equal(undefined);
    // The matching client_id is fine.
    const ok = await browser.get(query({ id_token_hint: hint, client_id: client.clientId, post_logout_redirect_uri: signedOut, state: 's' }));
    expect(ok.location).to.equal(`${signedOut}?state=s`);
    expect(await sessionEnd(stack, session.sessionHash)).to.deep.include({ reason: 'logout' });
  });

  it('a hint that does not verify (foreign key, altered, an access token, not a JWT): nothing ends, home page', async () => {
    const { browser, session } = await signedIn();
    const good = await idToken({ userId: user.userId, sid: session.sid });
    const { privateKey } = await generateKeyPair('RS256');
    const [header] = good.split('.');
    const foreign = await new SignJWT({ iss: stack.baseUrl, sub: String(user.userId), aud: client.clientId, sid: session.sid })
      .setProtectedHeader({ ...JSON.parse(Buffer.from(header!, 'base64url').toString()) })
      .sign(privateKey);
    const parts = good.split('.');
    const claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString());
    const altered = [parts[0], Buffer.from(JSON.stringify({ ...claims, sub: String(user.userId + 1) })).toString('base64url'), parts[2]].join('.');
    const accessToken = (
      await mintAccessToken(await stack.oauth.signingKeys.current(), {
        issuer: stack.baseUrl,
        audience: `${stack.baseUrl}/api`,
        subject: String(user.userId),
        clientId: client.clientId,
        scopes: ['openid'],
        familyId: '0123456789abcdef0123456789abcdef',
        now: new Date(),
      })
    ).token;
    for (const hint of [foreign, altered, accessToken, 'not-a-jwt']) {
      const res = await browser.get(query({ id_token_hint: hint, post_logout_redirect_uri: signedOut, client_id: client.clientId }));
      expect(res.status).to.equal(302);
      expect(res.location).to.equal('/');
    }
    expect(await sessionEnd(stack, session.sessionHash)).to.equal(undefined);
    expect(await stillSignedIn(browser)).to.equal(true);
  });

  it('no hint: the session never ends; a URI registered for client_id is honoured with state, else home', async () => {
    const { browser, session } = await signedIn();
    const withClient = await browser.get(query({ client_id: client.clientId, post_logout_redirect_uri: signedOut, state: 'x' }));
    expect(withClient.location).to.equal(`${signedOut}?state=x`);
    const withoutClient = await browser.get(query({ post_logout_redirect_uri: signedOut, state: 'x' }));
    expect(withoutClient.location).to.equal('/');
    const nothing = await browser.get('/api/oauth/logout');
    expect(nothing.status).to.equal(302);
    expect(nothing.location).to.equal('/');
    const unknownClient = await browser.get(query({ client_id: `svc_${'9'.repeat(32)}`, post_logout_redirect_uri: signedOut }));
    expect(unknownClient.location).to.equal('/');
    expect(await sessionEnd(stack, session.sessionHash)).to.equal(undefined);
    expect(await stillSignedIn(browser)).to.equal(true);
  });

  it('a valid hint without a signed-in browser: 302 to the registered URI, nothing to end', async () => {
    const { session } = await signedIn();
    const stranger = new Browser(stack.baseUrl);
    const res = await stranger.get(query({ id_token_hint: await idToken({ userId: user.userId, sid: session.sid }), post_logout_redirect_uri: signedOut }));
    expect(res.location).to.equal(signedOut);
    expect(await sessionEnd(stack, session.sessionHash)).to.equal(undefined);
  });

  describe('malformed input: nothing ends, home page', () => {
    const rows: Array<[string, (hint: string) => string]> = [
      ['a repeated state', (hint) => `id_token_hint=${hint}&post_logout_redirect_uri=${encodeURIComponent(signedOut)}&state=a&state=b`],
      ['a repeated id_token_hint', (hint) => `id_token_hint=${hint}&id_token_hint=${hint}`],
      ['a repeated post_logout_redirect_uri', (hint) => `id_token_hint=${hint}&post_logout_redirect_uri=${encodeURIComponent(signedOut)}&post_logout_redirect_uri=x`],
      ['a state with a control character', (hint) => `id_token_hint=${hint}&post_logout_redirect_uri=${encodeURIComponent(signedOut)}&state=a%0Ab`],
      ['a malformed client_id', (hint) => `id_token_hint=${hint}&client_id=svc_<x>&post_logout_redirect_uri=${encodeURIComponent(signedOut)}`],
      ['a post_logout_redirect_uri with non-ASCII', (hint) => `id_token_hint=${hint}&post_logout_redirect_uri=https%3A%2F%2Fapp.example.test%2F%C3%A9`],
    ];
    for (const [name, build] of rows) {
      it(name, async () => {
        const { browser, session } = await signedIn();
        const res = await browser.get(`/api/oauth/logout?${build(await idToken({ userId: user.userId, sid: session.sid }))}`);
        expect(res.status).to.equal(302);
        expect(res.location).to.equal('/');
        expect(await sessionEnd(stack, session.sessionHash)).to.equal(undefined);
      });
    }

    it('a POST body that is not a form', async () => {
      const { browser, session } = await signedIn();
      const hint = await idToken({ userId: user.userId, sid: session.sid });
      const res = await browser.request('POST', '/api/oauth/logout', {
        body: JSON.stringify({ id_token_hint: hint, post_logout_redirect_uri: signedOut }),
        headers: { 'Content-Type': 'application/json' },
      });
      expect(res.status).to.equal(302);
      expect(res.location).to.equal('/');
      expect(await sessionEnd(stack, session.sessionHash)).to.equal(undefined);
    });
  });

  it('429 with Retry-After once a source IP has used up its logout requests', async () => {
    const gateway = await stack.serve({ trustProxy: true });
    try {
      const browser = new Browser(gateway.baseUrl);
      const headers = { 'X-Forwarded-For': '192.0.2.55' };
      for (let i = 0; i < 120; i++) expect((await browser.get('/api/oauth/logout', { headers })).status).to.equal(302);
      const limited = await browser.get('/api/oauth/logout', { headers });
      expect(limited.status).to.equal(429);
      expect(Number(limited.headers.get('retry-after'))).to.be.greaterThan(0);
      expect(JSON.parse(limited.text)).to.deep.include({ error: 'temporarily_unavailable' });
    } finally {
      await gateway.close();
    }
  });
});
