// The sign-in page end to end: one answer for every failure, CSRF, the session cookie and its
// events, accounts sharing an email across organizations, throttling, and the page headers.
import { expect } from 'chai';
import { startStack, type Stack } from '../support/stack.js';
import { sha256Hex } from '../../shared/oauth/opaque-credentials.js';
import { Browser, csrfTokenOf, inputValue } from './support/browser.js';
import { authorizeInBrowser, authorizePath, submitPassword } from './support/sign-in-driver.js';
import { pkce, sessionEnd, sessionEvents, signedInBrowser, startedSession } from './support/session-probe.js';

describe('password sign-in (GET/POST /signin)', function () {
  this.timeout(120_000);
  let stack: Stack;
  let orgId: number;
  let user: { userId: number; email: string; password: string };

  before(async () => {
    stack = await startStack({ label: 'signin_password' });
    ({ orgId } = await stack.seed.tenant());
    const u = await stack.seed.user(orgId);
    user = { userId: u.userId, email: u.email, password: u.password! };
  });
  after(async () => {
    await stack?.stop();
  });

  async function attempt(browser: Browser, email: string, password: string) {
    const page = await browser.get('/signin');
    return browser.post('/signin', { csrf: csrfTokenOf(page.text), email, password });
  }

  it('serves an accessible, uncached, unframeable page under a strict content security policy, with a CSRF cookie', async () => {
    const res = await new Browser(stack.baseUrl).get('/signin');
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).to.equal('no-store');
    expect(res.headers.get('x-frame-options')).to.equal('DENY');
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).to.include("script-src 'self'").and.include("frame-ancestors 'none'").and.include("default-src 'none'");
    expect(csp).to.not.include('unsafe-inline');
    expect(res.text).to.include('<html lang="en">').and.include('<label for="email">').and.include('autocomplete="current-password"');
    const csrf = res.setCookies.find((c) => c.name === 'gp_csrf');
    expect(csrf?.attributes).to.include({ httponly: true, secure: true, samesite: 'Lax', path: '/' });
    expect(csrfTokenOf(res.text)).to.not.equal(csrf?.value);
  });

  it('signs in with email and password: session cookie, SignInSessionStarted with amr pwd, account page', async () => {
    const browser = new Browser(stack.baseUrl);
    const page = await browser.get('/signin');
    const res = await browser.post('/signin', { csrf: csrfTokenOf(page.text), email: user.email, password: user.password });
    expect(res.status).to.equal(302);
    expect(res.location).to.equal('/account');
    expect(res.headers.get('cache-control')).to.equal('no-store');
    const cookie = res.setCookies.find((c) => c.name === 'gp_session');
    expect(cookie?.value).to.match(/^[A-Za-z0-9_-]{43}$/);
    expect(cookie?.attributes).to.include({ httponly: true, secure: true, samesite: 'Lax', path: '/' });
    const session = await startedSession(stack, browser);
    expect(session).to.deep.include({ sessionHash: sha256Hex(cookie!.value), userId: user.userId, orgId, amr: ['pwd'] });
    expect(session.sid).to.match(/^[A-Za-z0-9_-]{16,64}$/);
    const [started] = (await sessionEvents(stack, browser)).filter((e) => e.type === 'SignInSessionStarted');
    expect(started?.metadata.actor).to.deep.equal({ kind: 'user', id: user.userId });
    // The secret itself is in no event.
    const written = await sessionEvents(stack, browser);
    expect(written).to.have.length(1);
    expect(JSON.stringify(written.map((e) => [e.streamName, e.data, e.metadata]))).to.not.include(cookie!.value);
    const account = await browser.get('/account');
    expect(account.status).to.equal(200);
    expect(account.text).to.include(user.email);
    expect(account.headers.get('cache-control')).to.equal('no-store');
  });

  it('wrong password and unknown email get the same answer, and no session', async () => {
    const unknownEmail = `nobody-${Date.now()}@example.com`;
    const browser = new Browser(stack.baseUrl);
    const wrong = await attempt(browser, user.email, 'not the password');
    const unknown = await attempt(browser, unknownEmail, 'not the password');
    expect(wrong.status).to.equal(400);
    expect(unknown.status).to.equal(wrong.status);
    expect(unknown.text.replace(unknownEmail, 'EMAIL')).to.equal(wrong.text.replace(user.email, 'EMAIL'));
    expect(wrong.text).to.include('Email or password is incorrect.');
    expect(wrong.text).to.include('aria-invalid="true"');
    expect(inputValue(wrong.text, 'email')).to.equal(user.email);
    expect(inputValue(wrong.text, 'password')).to.equal('');
    expect(browser.jar.get('gp_session')).to.equal(undefined);
    expect(wrong.setCookies.map((c) => c.name)).to.not.include('gp_session');
  });

  it('an empty field, an account without a password and an over-long password get the same message', async () => {
    const noPassword = await stack.seed.user(orgId, { password: null });
    const browser = new Browser(stack.baseUrl);
    for (const [email, password] of [
      ['', user.password],
      [user.email, ''],
      [noPassword.email, 'whatever-password'],
      [user.email, 'x'.repeat(2000)],
      ['not-an-email', user.password],
    ] as const) {
      const res = await attempt(browser, email, password);
      expect(res.status, `${email}/${password.length}`).to.equal(400);
      expect(res.text).to.include('Email or password is incorrect.');
    }
    expect(browser.jar.get('gp_session')).to.equal(undefined);
  });

  it('finds the account whatever the case and surrounding spaces of the email', async () => {
    const res = await attempt(new Browser(stack.baseUrl), `  ${user.email.toUpperCase()} `, user.password);
    expect(res.location).to.equal('/account');
  });

  it('tries every account of an email across organizations, and prefers the organization of the waiting client', async () => {
    const shared = `shared-${Date.now()}@example.com`;
    const orgB = await stack.seed.organization();
    const inA = await stack.seed.user(orgId, { email: shared, password: 'password-of-a' });
    const inB = await stack.seed.user(orgB, { email: shared, password: 'password-of-b' });
    expect(await startedSession(stack, await signedInBrowser(stack, shared, 'password-of-a'))).to.deep.include({ userId: inA.userId, orgId });
    expect(await startedSession(stack, await signedInBrowser(stack, shared, 'password-of-b'))).to.deep.include({ userId: inB.userId, orgId: orgB });
    // Same password in both: the account of the client's organization is the one signed in.
    const samePassword = `same-${Date.now()}@example.com`;
    await stack.seed.user(orgId, { email: samePassword, password: 'one-password' });
    const bInB = await stack.seed.user(orgB, { email: samePassword, password: 'one-password' });
    const clientB = await stack.seed.client(orgB);
    const result = await authorizeInBrowser(stack, {
      email: samePassword,
      password: 'one-password',
      clientId: clientB.clientId,
      redirectUri: clientB.redirectUri,
      scope: 'openid',
      codeChallenge: pkce().challenge,
      state: 'b',
    });
    expect((await startedSession(stack, result.browser)).userId).to.equal(bInB.userId);
  });

  it('without the CSRF token, or with the token of another browser: 403 and no session', async () => {
    const browser = new Browser(stack.baseUrl);
    await browser.get('/signin');
    const missing = await browser.post('/signin', { email: user.email, password: user.password });
    expect(missing.status).to.equal(403);
    const foreign = await new Browser(stack.baseUrl).get('/signin');
    const crossed = await browser.post('/signin', { csrf: csrfTokenOf(foreign.text), email: user.email, password: user.password });
    expect(crossed.status).to.equal(403);
    const noCookie = new Browser(stack.baseUrl);
    const stolen = await noCookie.post('/signin', { csrf: csrfTokenOf(foreign.text), email: user.email, password: user.password });
    expect(stolen.status).to.equal(403);
    expect(browser.jar.get('gp_session')).to.equal(undefined);
    expect(noCookie.jar.get('gp_session')).to.equal(undefined);
  });

  it('accepts the CSRF token in the X-CSRF-Token header, and answers a script asking for JSON with where to go', async () => {
    const browser = new Browser(stack.baseUrl);
    const page = await browser.get('/signin');
    const res = await browser.post('/signin', { email: user.email, password: user.password }, { headers: { 'X-CSRF-Token': csrfTokenOf(page.text), Accept: 'application/json' } });
    expect(res.status).to.equal(200);
    expect(JSON.parse(res.text)).to.deep.equal({ location: '/account' });
    expect(res.headers.get('cache-control')).to.equal('no-store');
    expect(browser.jar.get('gp_session')).to.be.a('string');
  });

  it('a new sign-in in the same browser ends the previous session (replaced)', async () => {
    const browser = await signedInBrowser(stack, user.email, user.password);
    const first = await startedSession(stack, browser);
    // The sign-in page sends a signed-in visitor away; the form still accepts a post (switching accounts).
    const account = await browser.get('/account');
    const res = await browser.post('/signin', { csrf: csrfTokenOf(account.text), email: user.email, password: user.password });
    expect(res.location).to.equal('/account');
    const second = await startedSession(stack, browser);
    expect(second.sid).to.not.equal(first.sid);
    expect(await sessionEnd(stack, first.sessionHash)).to.deep.equal({ sessionHash: first.sessionHash, sid: first.sid, reason: 'replaced' });
  });

  it('a signed-in visitor of /signin (nothing to authorize) goes to the account page; /account without a session goes to /signin', async () => {
    const browser = await signedInBrowser(stack, user.email, user.password);
    expect((await browser.get('/signin')).location).to.equal('/account');
    expect((await new Browser(stack.baseUrl).get('/account')).location).to.equal('/signin');
  });

  it('pre-fills the email from the waiting request’s login_hint, escaped', async () => {
    const client = await stack.seed.client(orgId);
    const browser = new Browser(stack.baseUrl);
    const hint = 'uma"<b>@example.com';
    await browser.get(authorizePath({ clientId: client.clientId, redirectUri: client.redirectUri, codeChallenge: pkce().challenge, extra: { login_hint: hint } }));
    const page = await browser.get('/signin');
    expect(inputValue(page.text, 'email')).to.equal(hint);
    expect(page.text).to.not.include('<b>');
  });

  it('signing out from the account page ends the session (logout) and clears the cookie; the form needs the CSRF token', async () => {
    const browser = await signedInBrowser(stack, user.email, user.password);
    const session = await startedSession(stack, browser);
    const page = await browser.get('/account');
    expect((await browser.post('/account/sign-out', {})).status).to.equal(403);
    const res = await browser.post('/account/sign-out', { csrf: csrfTokenOf(page.text) });
    expect(res.status).to.equal(302);
    expect(res.location).to.equal('/');
    expect(res.setCookies.find((c) => c.name === 'gp_session')?.attributes['max-age']).to.equal('0');
    expect(await sessionEnd(stack, session.sessionHash)).to.deep.include({ reason: 'logout' });
    expect((await browser.get('/account')).location).to.equal('/signin');
  });

  it('a form that is not url-encoded is refused (415)', async () => {
    const browser = new Browser(stack.baseUrl);
    const page = await browser.get('/signin');
    const res = await browser.request('POST', '/signin', {
      body: JSON.stringify({ csrf: csrfTokenOf(page.text), email: user.email, password: user.password }),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(res.status).to.equal(415);
    expect(browser.jar.get('gp_session')).to.equal(undefined);
  });

  it('the home page is a small accessible page, never cached', async () => {
    const res = await new Browser(stack.baseUrl).get('/');
    expect(res.status).to.equal(200);
    expect(res.headers.get('cache-control')).to.equal('no-store');
    expect(res.text).to.include('<html lang="en">').and.include('<h1>Guest Pass</h1>').and.include('href="/signin"');
  });

  it('after 10 failed attempts for one email, further attempts are refused (429, Retry-After) even with the right password', async () => {
    const target = await stack.seed.user(orgId);
    const browser = new Browser(stack.baseUrl);
    for (let i = 0; i < 10; i++) expect((await attempt(browser, target.email, `wrong-${i}`)).status).to.equal(400);
    const refused = await attempt(browser, target.email, target.password!);
    expect(refused.status).to.equal(429);
    expect(Number(refused.headers.get('retry-after'))).to.be.greaterThan(0);
    expect(refused.headers.get('content-type')).to.match(/^text\/html/);
    expect(browser.jar.get('gp_session')).to.equal(undefined);
    // Another address is not affected.
    expect((await attempt(browser, user.email, user.password)).location).to.equal('/account');
  });

  it('of 40 simultaneous wrong passwords for one account, exactly 10 are checked; the other 30 are refused (429) unchecked', async () => {
    const target = await stack.seed.user(orgId);
    const browser = new Browser(stack.baseUrl);
    const csrf = csrfTokenOf((await browser.get('/signin')).text);
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => browser.post('/signin', { csrf, email: target.email, password: `wrong-${i}` })));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 400), 'checked and wrong').to.have.length(10);
    expect(statuses.filter((s) => s === 429), 'refused before the check').to.have.length(30);
    for (const refused of answers.filter((a) => a.status === 429)) {
      expect(Number(refused.headers.get('retry-after'))).to.be.greaterThan(0);
      expect(refused.text).to.include('Too many attempts.');
    }
    expect((await attempt(browser, target.email, target.password!)).status, 'the account is locked for this browser').to.equal(429);
  });

  describe('a browser that signed in before (device cookie)', () => {
    /** A browser (not signed in) that carries a device cookie: the owner's, after the session ended. */
    const withDevice = (device: string) => {
      const browser = new Browser(stack.baseUrl);
      browser.jar.set('gp_device', device);
      return browser;
    };

    it('still signs in after an attacker spent the account\'s attempts, and has a small budget of its own', async () => {
      const victim = await stack.seed.user(orgId);
      const own = new Browser(stack.baseUrl);
      expect((await attempt(own, victim.email, victim.password!)).location).to.equal('/account');
      const device = own.jar.get('gp_device');
      expect(device, 'a device cookie after the right password').to.be.a('string');
      const set = (await attempt(new Browser(stack.baseUrl), victim.email, victim.password!)).setCookies.find((c) => c.name === 'gp_device');
      expect(set?.attributes).to.include({ httponly: true, secure: true, samesite: 'Strict', path: '/' });

      const attacker = new Browser(stack.baseUrl);
      for (let i = 0; i < 10; i++) expect((await attempt(attacker, victim.email, `guess-${i}`)).status).to.equal(400);
      expect((await attempt(attacker, victim.email, victim.password!)).status, 'the account is locked for unknown browsers').to.equal(429);

      expect((await attempt(withDevice(device!), victim.email, victim.password!)).location, 'the owner\'s browser signs in').to.equal('/account');

      // Its own budget: 5 wrong passwords, then even the right one waits.
      const owner = withDevice(device!);
      for (let i = 0; i < 5; i++) expect((await attempt(owner, victim.email, `typo-${i}`)).status).to.equal(400);
      expect((await attempt(owner, victim.email, victim.password!)).status).to.equal(429);
    });

    it('counts for its own account only: another account\'s lockout applies to it', async () => {
      const owner = await stack.seed.user(orgId);
      const other = await stack.seed.user(orgId);
      const browser = new Browser(stack.baseUrl);
      expect((await attempt(browser, owner.email, owner.password!)).location).to.equal('/account');
      const attacker = new Browser(stack.baseUrl);
      for (let i = 0; i < 10; i++) expect((await attempt(attacker, other.email, `guess-${i}`)).status).to.equal(400);
      expect((await attempt(withDevice(browser.jar.get('gp_device')!), other.email, other.password!)).status).to.equal(429);
    });

    it('a forged or altered device cookie is no device cookie', async () => {
      const victim = await stack.seed.user(orgId);
      const attacker = new Browser(stack.baseUrl);
      for (let i = 0; i < 10; i++) expect((await attempt(attacker, victim.email, `guess-${i}`)).status).to.equal(400);
      const forged = new Browser(stack.baseUrl);
      forged.jar.set('gp_device', 'AAAA.BBBB');
      expect((await attempt(forged, victim.email, victim.password!)).status).to.equal(429);
    });
  });

  it('after 100 failed attempts from one source IP, its attempts are refused (429)', async () => {
    const gateway = await stack.serve({ trustProxy: true });
    try {
      const headers = { 'X-Forwarded-For': '203.0.113.77' };
      const browser = new Browser(gateway.baseUrl);
      const page = await browser.get('/signin', { headers });
      const csrf = csrfTokenOf(page.text);
      for (let i = 0; i < 100; i++) {
        // A different address each time, so only the per-IP count reaches its limit (an empty
        // password fails like any other, without the scrypt work).
        const res = await browser.post('/signin', { csrf, email: `guess-${i}@example.com`, password: '' }, { headers });
        expect(res.status).to.equal(400);
      }
      const refused = await browser.post('/signin', { csrf, email: user.email, password: user.password }, { headers });
      expect(refused.status).to.equal(429);
      const otherIp = await browser.post('/signin', { csrf, email: user.email, password: user.password }, { headers: { 'X-Forwarded-For': '203.0.113.78' } });
      expect(otherIp.location).to.equal('/account');
    } finally {
      await gateway.close();
    }
  });

  it('a stale sign-in page of a finished flow still signs in (to the account page)', async () => {
    const browser = new Browser(stack.baseUrl);
    const next = await submitPassword(browser, user.email, user.password);
    expect(next).to.equal('/account');
  });
});
