// Passkeys through the real pages of the running service: sign in with a password, add a passkey
// from the account page (its CSRF token from the page's meta element, as the browser script
// reads it), then sign in with the passkey from the sign-in page, alone and in the middle of an
// authorization whose id_token then says how the user signed in.
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { decodeJwt } from 'jose';
import { startStack, type Stack } from '../../support/stack.js';
import { Browser, csrfTokenOf, type BrowserResponse } from '../support/browser.js';
import { authorizePath, submitConsent, submitPassword } from '../support/sign-in-driver.js';
import { oauthStreams } from '../../../shared/oauth/oauth-events.js';
import { s256Challenge } from '../../../shared/oauth/pkce.js';
import { sessionHashOf } from '../../../shared/sign-in/session-decider.js';
import { SoftwareAuthenticator } from './support/software-authenticator.js';

describe('passkeys (e2e, through the sign-in and account pages)', function () {
  this.timeout(60_000);
  let stack: Stack;
  let orgId: number;
  let origin: string;

  before(async () => {
    stack = await startStack({ label: 'passkey-pages' });
    orgId = (await stack.seed.tenant()).orgId;
    origin = new URL(stack.baseUrl).origin;
  });

  after(async () => {
    await stack?.stop();
  });

  function postJson(browser: Browser, path: string, csrf: string | null, body: unknown): Promise<BrowserResponse> {
    return browser.request('POST', path, {
      body: JSON.stringify(body),
      headers: { 'Content-Type': 'application/json', Accept: 'application/json', ...(csrf === null ? {} : { 'X-CSRF-Token': csrf }) },
    });
  }

  async function amrOf(browser: Browser): Promise<string[] | null> {
    const hash = sessionHashOf(browser.jar.get('gp_session'));
    if (hash === null) return null;
    const started = (await stack.store.readStream(oauthStreams.signInSession(hash))).find((e) => e.type === 'SignInSessionStarted');
    return started ? (started.data as { amr: string[] }).amr : null;
  }

  /** A user who signed in with a password and added a passkey from the account page. */
  async function userWithPasskey(): Promise<{ email: string; authenticator: SoftwareAuthenticator; userId: number }> {
    const user = await stack.seed.user(orgId, { email: `pk-${randomUUID().slice(0, 8)}@example.com` });
    const browser = new Browser(stack.baseUrl);
    expect(await submitPassword(browser, user.email, user.password!)).to.equal('/account');
    const account = await browser.get('/account');
    expect(account.status).to.equal(200);
    expect(account.text).to.include('<section id="passkeys"');
    expect(account.text).to.include('<button id="passkey-register" type="button">');
    expect(account.text).to.include('<script src="/signin/passkey.js" defer></script>');
    expect(account.text).to.include('You have no passkeys yet.');
    const csrf = csrfTokenOf(account.text.slice(account.text.indexOf('<meta name="csrf-token"')));

    const authenticator = new SoftwareAuthenticator(origin);
    const options = await postJson(browser, '/account/passkeys/options', csrf, {});
    expect(options.status, options.text).to.equal(200);
    const verified = await postJson(browser, '/account/passkeys/verify', csrf, { credential: authenticator.create(JSON.parse(options.text)) });
    expect(verified.status, verified.text).to.equal(201);
    expect((await browser.get('/account')).text).to.include('You have 1 passkey.');
    return { email: user.email, authenticator, userId: user.userId };
  }

  /** What the script does on the sign-in page: options by fetch, then the assertion as a form. */
  async function signInWithPasskey(browser: Browser, authenticator: SoftwareAuthenticator): Promise<BrowserResponse> {
    const page = await browser.get('/signin');
    expect(page.status).to.equal(200);
    expect(page.text).to.include('<button id="passkey-signin" type="button">');
    expect(page.text).to.include('<script src="/signin/passkey.js" defer></script>');
    const csrf = csrfTokenOf(page.text);
    const options = await postJson(browser, '/signin/passkey/options', csrf, {});
    expect(options.status, options.text).to.equal(200);
    return browser.post('/signin/passkey/verify', { csrf, credential: JSON.stringify(authenticator.get(JSON.parse(options.text))) });
  }

  it('serves the script the pages load, as JavaScript', async () => {
    const res = await new Browser(stack.baseUrl).get('/signin/passkey.js');
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/javascript/);
  });

  it('adds a passkey from the account page, then signs in with it (amr hwk, user)', async () => {
    const { authenticator, userId } = await userWithPasskey();
    const browser = new Browser(stack.baseUrl);
    const res = await signInWithPasskey(browser, authenticator);
    expect(res.status, res.text).to.equal(302);
    expect(res.location).to.equal('/account');
    expect(await amrOf(browser)).to.deep.equal(['hwk', 'user']);
    const account = await browser.get('/account');
    expect(account.status).to.equal(200);
    const used = (await stack.store.readStream(oauthStreams.userCredentials(userId))).filter((e) => e.type === 'PasskeyUsed');
    expect(used).to.have.length(1);
  });

  it('signs in with a passkey in the middle of an authorization: the id_token says amr hwk, user', async () => {
    const { authenticator, userId } = await userWithPasskey();
    const client = await stack.seed.client(orgId);
    const verifier = `${randomUUID()}${randomUUID()}`;
    const browser = new Browser(stack.baseUrl);
    const authorize = await browser.get(authorizePath({ clientId: client.clientId, redirectUri: client.redirectUri, scope: 'openid', codeChallenge: s256Challenge(verifier) }));
    expect(authorize.location).to.equal('/signin');

    const res = await signInWithPasskey(browser, authenticator);
    expect(res.status, res.text).to.equal(302);
    let location = res.location!;
    for (let hop = 0; hop < 4 && !location.startsWith(client.redirectUri); hop++) {
      location = location === '/consent' ? await submitConsent(browser) : (await browser.get(location)).location!;
    }
    const code = new URL(location).searchParams.get('code')!;
    const token = await stack.request('POST', '/api/oauth/token', {
      raw: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier: verifier, client_id: client.clientId }).toString(),
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect(token.status, token.text).to.equal(200);
    const claims = decodeJwt(token.body.id_token as string);
    expect(claims.sub).to.equal(String(userId));
    expect(claims.amr).to.deep.equal(['hwk', 'user']);
  });

  it('shows the sign-in page again, with one generic message, when a passkey is refused', async () => {
    const browser = new Browser(stack.baseUrl);
    const res = await signInWithPasskey(browser, new SoftwareAuthenticator(origin));
    expect(res.status).to.equal(400);
    expect(res.headers.get('content-type')).to.match(/^text\/html/);
    expect(res.headers.get('cache-control')).to.equal('no-store');
    expect(res.text).to.include('Passkey sign-in did not work. Try again, or sign in with your password.');
    expect(res.text).to.include('<button id="passkey-signin" type="button">');
    expect(browser.jar.get('gp_session')).to.equal(undefined);
  });

  it("refuses the passkey routes without the page's CSRF token", async () => {
    const { authenticator } = await userWithPasskey();
    const browser = new Browser(stack.baseUrl);
    await browser.get('/signin');
    expect((await postJson(browser, '/signin/passkey/options', null, {})).status).to.equal(403);
    const csrf = csrfTokenOf((await browser.get('/signin')).text);
    const options = await postJson(browser, '/signin/passkey/options', csrf, {});
    const res = await browser.post('/signin/passkey/verify', { credential: JSON.stringify(authenticator.get(JSON.parse(options.text))) });
    expect(res.status).to.equal(403);
    expect(browser.jar.get('gp_session')).to.equal(undefined);
  });

  it('refuses to add a passkey without a signed-in session', async () => {
    const browser = new Browser(stack.baseUrl);
    const csrf = csrfTokenOf((await browser.get('/signin')).text);
    expect((await postJson(browser, '/account/passkeys/options', csrf, {})).status).to.equal(403);
  });
});
