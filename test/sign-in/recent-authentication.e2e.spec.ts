// Adding an authenticator (an authenticator app, a passkey), or removing a passkey, needs a recent
// sign-in: a session cookie that leaked must not let its holder change the account's authenticators.
import { randomBytes, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { startStack, type Stack } from '../support/stack.js';
import { oauthStreams } from '../../shared/oauth/oauth-events.js';
import { sha256Hex } from '../../shared/oauth/opaque-credentials.js';
import { RECENT_AUTHENTICATION_SECONDS, newSid, signInSessionDecider } from '../../shared/sign-in/session-decider.js';
import { Browser, csrfTokenOf } from './support/browser.js';
import { passkeyDecider } from '../../shared/sign-in/passkeys/passkey-decider.js';
import { authorizePath, submitPassword } from './support/sign-in-driver.js';
import { pkce } from './support/session-probe.js';

describe('adding an authenticator needs a recent sign-in', function () {
  this.timeout(120_000);
  let stack: Stack;
  let orgId: number;

  before(async () => {
    stack = await startStack({ label: 'signin_recent' });
    ({ orgId } = await stack.seed.tenant());
  });
  after(async () => {
    await stack?.stop();
  });

  /** A browser holding a session of `userId` that began `ageSeconds` ago (as a cookie kept since then would). */
  async function browserSignedInAgo(userId: number, ageSeconds: number): Promise<Browser> {
    const secret = randomBytes(32).toString('base64url');
    const now = new Date();
    const authTime = new Date(now.getTime() - ageSeconds * 1000).toISOString();
    await stack.deps.handler.handle(
      oauthStreams.signInSession(sha256Hex(secret)),
      signInSessionDecider,
      { type: 'StartSignInSession', data: { sessionHash: sha256Hex(secret), sid: newSid(), userId, orgId, authTime, amr: ['pwd'] } },
      { correlationId: randomUUID(), actor: { kind: 'user', id: userId }, now },
    );
    const browser = new Browser(stack.baseUrl);
    browser.jar.set('gp_session', secret);
    return browser;
  }

  const credentialEvents = async (userId: number) => (await stack.store.readStream(oauthStreams.userCredentials(userId))).map((e) => e.type);
  const ceremonies = async () => Number((await stack.db.raw('SELECT count(*) AS n FROM passkey_ceremonies')).rows[0].n);

  it('a session older than the limit gets a way to sign in again instead of the controls, and every add is refused', async () => {
    const user = await stack.seed.user(orgId);
    const browser = await browserSignedInAgo(user.userId, RECENT_AUTHENTICATION_SECONDS + 60);

    const account = await browser.get('/account');
    expect(account.status).to.equal(200);
    expect(account.text).to.include(`Signed in as <strong>${user.email}</strong>`);
    expect(account.text).to.not.include('id="passkey-register"');
    expect(account.text).to.not.include('href="/account/totp"');
    expect(account.text).to.include('To add a passkey, sign in again first.');
    expect(account.text).to.include('action="/account/reauthenticate"');
    const csrf = csrfTokenOf(account.text);

    expect((await browser.get('/account/totp')).location).to.equal('/signin');
    expect((await browser.post('/account/totp', { csrf, code: '123456' })).location).to.equal('/signin');
    const before = await ceremonies();
    const options = await browser.post('/account/passkeys/options', { csrf }, { headers: { Accept: 'application/json' } });
    expect(options.status).to.equal(403);
    expect(JSON.parse(options.text)).to.deep.include({ error: 'access_denied', error_description: 'Sign in again to add a passkey.' });
    // Also the second step, for a ceremony begun while the sign-in was recent.
    const verify = await browser.post('/account/passkeys/verify', { csrf }, { headers: { Accept: 'application/json' } });
    expect(verify.status).to.equal(403);
    // A passkey the user has (registered with a recent sign-in, say) cannot be removed either.
    await stack.deps.handler.handle(
      oauthStreams.userCredentials(user.userId),
      passkeyDecider,
      { type: 'RegisterPasskey', data: { userId: user.userId, credentialId: 'Y3JlZA', publicKey: 'cGs', counter: 0, transports: [] } },
      { correlationId: randomUUID(), actor: { kind: 'user', id: user.userId }, now: new Date() },
    );
    const remove = await browser.post('/account/passkeys/remove', { csrf, credential_id: 'Y3JlZA' }, { headers: { Accept: 'application/json' } });
    expect(remove.status).to.equal(403);
    expect(JSON.parse(remove.text).error_description).to.equal('Sign in again to remove a passkey.');
    expect(await ceremonies()).to.equal(before);
    expect(await credentialEvents(user.userId)).to.deep.equal(['PasskeyRegistered']);

    // An authorization left pending in this browser (prompt=login sent it to the sign-in page) is
    // not what signing in again from the account page completes.
    const client = await stack.seed.client(orgId);
    const pending = await browser.get(authorizePath({ clientId: client.clientId, redirectUri: client.redirectUri, codeChallenge: pkce().challenge, prompt: 'login' }));
    expect(pending.location).to.equal('/signin');
    const reauthenticate = await browser.post('/account/reauthenticate', { csrf });
    expect(reauthenticate.location).to.equal('/signin');
    // Signing in again (same browser) makes the session recent: the controls come back.
    expect(await submitPassword(browser, user.email, user.password!)).to.equal('/account');
    const again = await browser.get('/account');
    expect(again.text).to.include('id="passkey-register"');
    expect((await browser.get('/account/totp')).status).to.equal(200);
  });

  it('a session just inside the limit may add one', async () => {
    const user = await stack.seed.user(orgId);
    const browser = await browserSignedInAgo(user.userId, RECENT_AUTHENTICATION_SECONDS - 60);
    const account = await browser.get('/account');
    expect(account.text).to.include('id="passkey-register"');
    expect((await browser.get('/account/totp')).status).to.equal(200);
    const options = await browser.post('/account/passkeys/options', { csrf: csrfTokenOf(account.text) }, { headers: { Accept: 'application/json' } });
    expect(options.status, options.text).to.equal(200);
  });
});
