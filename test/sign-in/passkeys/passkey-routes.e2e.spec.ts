// Passkeys over HTTP: registration by a signed-in user and sign-in with a discoverable
// credential, driven by a software authenticator against the passkey routes mounted with the
// stack's ports and a SignInKit test double (sessions and CSRF in memory).
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { startStack, type Stack } from '../../support/stack.js';
import { passkeyRoutes } from '../../../command-service/sign-in/passkeys/passkey-routes.js';
import { oauthStreams } from '../../../shared/oauth/oauth-events.js';
import { SoftwareAuthenticator } from './support/software-authenticator.js';
import { SIGNED_IN_LOCATION, TEST_SESSION_COOKIE, TestSignInKit } from './support/test-sign-in-kit.js';
import { TestBrowser, type BrowserResponse } from './support/browser.js';
import { serveMethod, type MethodApp } from './support/method-app.js';

describe('passkeys (e2e, passkey routes with a test sign-in kit)', function () {
  this.timeout(60_000);
  let stack: Stack;
  let kit: TestSignInKit;
  let app: MethodApp;
  let orgId: number;
  /** What a browser on the service's pages writes into clientDataJSON: the issuer's origin. */
  let origin: string;

  before(async () => {
    stack = await startStack({ label: 'passkeys' });
    kit = new TestSignInKit();
    app = await serveMethod(stack, kit, passkeyRoutes);
    origin = new URL(stack.oauth.issuer).origin;
    orgId = (await stack.seed.tenant()).orgId;
  });

  after(async () => {
    await app?.close();
    await stack?.stop();
  });

  beforeEach(() => {
    kit.completed.length = 0;
  });

  async function newUser(): Promise<{ userId: number; orgId: number }> {
    const { userId } = await stack.seed.user(orgId);
    return { userId, orgId };
  }

  function signedInBrowser(user: { userId: number; orgId: number }): TestBrowser {
    const browser = new TestBrowser(app.baseUrl);
    browser.setCookie(kit.startSession(user));
    return browser;
  }

  const csrf = () => ({ 'X-CSRF-Token': kit.csrf });

  async function register(browser: TestBrowser, authenticator: SoftwareAuthenticator, overrides = {}): Promise<BrowserResponse> {
    const options = await browser.postJson('/account/passkeys/options', {}, csrf());
    expect(options.status, options.text).to.equal(200);
    return browser.postJson('/account/passkeys/verify', { credential: authenticator.create(options.json, overrides) }, csrf());
  }

  async function registered(user: { userId: number; orgId: number }, authenticator: SoftwareAuthenticator): Promise<void> {
    const res = await register(signedInBrowser(user), authenticator);
    expect(res.status, res.text).to.equal(201);
  }

  async function signInOptions(browser: TestBrowser): Promise<any> {
    const res = await browser.postJson('/signin/passkey/options', {}, csrf());
    expect(res.status, res.text).to.equal(200);
    return res.json;
  }

  /** What the browser script does: the assertion posted as a form, so the redirect is a navigation. */
  function postAssertion(browser: TestBrowser, credential: unknown, fields: Record<string, string> = { csrf: kit.csrf }): Promise<BrowserResponse> {
    return browser.postForm('/signin/passkey/verify', { ...fields, credential: JSON.stringify(credential) });
  }

  async function signIn(authenticator: SoftwareAuthenticator, overrides = {}): Promise<BrowserResponse> {
    const browser = new TestBrowser(app.baseUrl);
    const options = await signInOptions(browser);
    return postAssertion(browser, authenticator.get(options, overrides));
  }

  function expectRefused(res: BrowserResponse): void {
    expect(res.status, res.text).to.equal(400);
    expect(res.json).to.deep.equal({ success: false, error: 'passkey sign-in failed', code: 'validation_failed' });
    expect(res.headers.getSetCookie().some((c) => c.startsWith(`${TEST_SESSION_COOKIE}=`))).to.equal(false);
    expect(kit.completed).to.deep.equal([]);
  }

  describe('the browser script', () => {
    it('is served as JavaScript from /signin/passkey.js and uses the WebAuthn API', async () => {
      const res = await new TestBrowser(app.baseUrl).getJson('/signin/passkey.js');
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/^text\/javascript/);
      expect(res.text).to.include('navigator.credentials.create');
      expect(res.text).to.include('navigator.credentials.get');
      expect(res.text).to.include("getElementById('passkey-signin')");
      expect(res.text).to.include("getElementById('passkey-register')");
    });

    it('answers 304 to a revalidation with its ETag', async () => {
      const browser = new TestBrowser(app.baseUrl);
      const first = await browser.getJson('/signin/passkey.js');
      const etag = first.headers.get('etag');
      expect(etag).to.be.a('string');
      expect((await browser.getJson('/signin/passkey.js', { 'If-None-Match': etag! })).status).to.equal(304);
    });
  });

  describe('registration', () => {
    it('gives creation options for a discoverable, user-verified credential on the issuer host, never cached', async () => {
      const user = await newUser();
      const res = await signedInBrowser(user).postJson('/account/passkeys/options', {}, csrf());
      expect(res.status).to.equal(200);
      expect(res.headers.get('cache-control')).to.equal('no-store');
      expect(res.json.rp.id).to.equal(new URL(stack.oauth.issuer).hostname);
      expect(res.json.authenticatorSelection).to.include({ residentKey: 'required', userVerification: 'required' });
      expect(res.json.attestation).to.equal('none');
      expect(Buffer.from(res.json.user.id, 'base64url').toString()).to.equal(String(user.userId));
    });

    it('records PasskeyRegistered on the user credentials stream and excludes the passkey from the next options', async () => {
      const user = await newUser();
      const authenticator = new SoftwareAuthenticator(origin);
      const browser = signedInBrowser(user);
      const res = await register(browser, authenticator);
      expect(res.status, res.text).to.equal(201);
      expect(res.json).to.deep.equal({ success: true, credential_id: authenticator.id });
      const events = await stack.store.readStream(oauthStreams.userCredentials(user.userId));
      const registeredEvent = events.find((e) => e.type === 'PasskeyRegistered');
      expect(registeredEvent?.data).to.include({ userId: user.userId, credentialId: authenticator.id, counter: 1 });
      expect(registeredEvent?.metadata.actor).to.deep.equal({ kind: 'user', id: user.userId });

      const next = await browser.postJson('/account/passkeys/options', {}, csrf());
      expect(next.json.excludeCredentials.map((c: { id: string }) => c.id)).to.deep.equal([authenticator.id]);
    });

    it('refuses the same passkey twice', async () => {
      const user = await newUser();
      const authenticator = new SoftwareAuthenticator(origin);
      await registered(user, authenticator);
      const again = await register(signedInBrowser(user), authenticator);
      expect(again.status).to.equal(409);
    });

    it('refuses an attestation made for another origin', async () => {
      const res = await register(signedInBrowser(await newUser()), new SoftwareAuthenticator(origin), { origin: 'https://evil.example' });
      expect(res.status).to.equal(400);
      expect(res.json.error).to.equal('passkey registration failed');
    });

    it('refuses a credential created without user verification', async () => {
      const res = await register(signedInBrowser(await newUser()), new SoftwareAuthenticator(origin), { userVerified: false });
      expect(res.status).to.equal(400);
    });

    it('refuses a replayed registration challenge', async () => {
      const browser = signedInBrowser(await newUser());
      const options = await browser.postJson('/account/passkeys/options', {}, csrf());
      const asItWas = browser.snapshot();
      const first = await browser.postJson('/account/passkeys/verify', { credential: new SoftwareAuthenticator(origin).create(options.json) }, csrf());
      expect(first.status, first.text).to.equal(201);
      // The same challenge, answered by another authenticator, with the cookies as they were.
      const replay = await asItWas.postJson('/account/passkeys/verify', { credential: new SoftwareAuthenticator(origin).create(options.json) }, csrf());
      expect(replay.status).to.equal(400);
    });

    it('needs a signed-in session', async () => {
      const res = await new TestBrowser(app.baseUrl).postJson('/account/passkeys/options', {}, csrf());
      expect(res.status).to.equal(403);
    });

    it('needs the CSRF token for the options and the verification', async () => {
      const user = await newUser();
      const browser = signedInBrowser(user);
      expect((await browser.postJson('/account/passkeys/options', {})).status).to.equal(403);
      expect((await browser.postJson('/account/passkeys/options', {}, { 'X-CSRF-Token': 'wrong' })).status).to.equal(403);
      const options = await browser.postJson('/account/passkeys/options', {}, csrf());
      const res = await browser.postJson('/account/passkeys/verify', { credential: new SoftwareAuthenticator(origin).create(options.json) });
      expect(res.status).to.equal(403);
      const events = await stack.store.readStream(oauthStreams.userCredentials(user.userId));
      expect(events.filter((e) => e.type === 'PasskeyRegistered')).to.have.length(0);
    });
  });

  describe('removal', () => {
    const removedEvents = async (userId: number) =>
      (await stack.store.readStream(oauthStreams.userCredentials(userId))).filter((e) => e.type === 'PasskeyRemoved').map((e) => e.data);

    it('records PasskeyRemoved and sends the browser back to the account page; the passkey signs in no more', async () => {
      const user = await newUser();
      const authenticator = new SoftwareAuthenticator(origin);
      await registered(user, authenticator);
      expect((await signIn(authenticator)).status).to.equal(302);

      const res = await signedInBrowser(user).postForm('/account/passkeys/remove', { csrf: kit.csrf, credential_id: authenticator.id });
      expect(res.status, res.text).to.be.oneOf([302, 303]);
      expect(res.headers.get('location')).to.equal('/account');
      expect(await removedEvents(user.userId)).to.deep.equal([{ userId: user.userId, credentialId: authenticator.id }]);
      kit.completed.length = 0;
      expectRefused(await signIn(authenticator));

      // Removing it again records nothing.
      const again = await signedInBrowser(user).postForm('/account/passkeys/remove', { csrf: kit.csrf, credential_id: authenticator.id });
      expect(again.status).to.be.oneOf([302, 303]);
      expect(await removedEvents(user.userId)).to.have.length(1);
    });

    it("changes nothing for another user's passkey, and needs the CSRF token and a well-formed id", async () => {
      const owner = await newUser();
      const authenticator = new SoftwareAuthenticator(origin);
      await registered(owner, authenticator);
      const stranger = signedInBrowser(await newUser());
      await stranger.postForm('/account/passkeys/remove', { csrf: kit.csrf, credential_id: authenticator.id });
      expect(await removedEvents(owner.userId)).to.deep.equal([]);
      expect((await signIn(authenticator)).status).to.equal(302);

      const browser = signedInBrowser(owner);
      const noCsrf = await browser.postForm('/account/passkeys/remove', { credential_id: authenticator.id });
      expect(noCsrf.status).to.equal(403);
      expect(noCsrf.json.code).to.equal('csrf_token_invalid');
      expect((await browser.postForm('/account/passkeys/remove', { csrf: kit.csrf, credential_id: 'not base64url!' })).status).to.equal(400);
      // No body at all (the token in its header): refused as a bad request, not a failure of the service.
      expect((await browser.postJson('/account/passkeys/remove', null, csrf())).status).to.equal(400);
      expect(await removedEvents(owner.userId)).to.deep.equal([]);
    });

    it('sends a person posting the form back to the account page, whatever was refused', async () => {
      const user = await newUser();
      const res = await signedInBrowser(user).post('/account/passkeys/remove', { credential_id: 'Y3JlZA' }, { headers: { Accept: 'text/html' } });
      expect(res.status).to.be.oneOf([302, 303]);
      expect(res.headers.get('location')).to.equal('/account');
    });

    it("refuses to remove the last passkey of a user with no other way to sign in", async () => {
      const { userId } = await stack.seed.user(orgId, { password: null });
      const user = { userId, orgId };
      const first = new SoftwareAuthenticator(origin);
      const second = new SoftwareAuthenticator(origin);
      await registered(user, first);
      await registered(user, second);
      const removeOne = await signedInBrowser(user).postForm('/account/passkeys/remove', { csrf: kit.csrf, credential_id: first.id });
      expect(removeOne.status).to.be.oneOf([302, 303]);
      const removeLast = await signedInBrowser(user).postForm('/account/passkeys/remove', { csrf: kit.csrf, credential_id: second.id });
      expect(removeLast.status).to.equal(409);
      expect(removeLast.json.error).to.match(/only way to sign in/);
      expect((await removedEvents(userId)).map((d) => (d as { credentialId: string }).credentialId)).to.deep.equal([first.id]);
    });
  });

  describe('sign-in', () => {
    it('gives request options with user verification required, no allowCredentials, never cached', async () => {
      const res = await new TestBrowser(app.baseUrl).postJson('/signin/passkey/options', {}, csrf());
      expect(res.status).to.equal(200);
      expect(res.headers.get('cache-control')).to.equal('no-store');
      expect(res.json.userVerification).to.equal('required');
      expect(res.json.rpId).to.equal(new URL(stack.oauth.issuer).hostname);
      expect(res.json.allowCredentials ?? []).to.deep.equal([]);
    });

    it('signs the user in with amr hwk and user after registration, and records PasskeyUsed', async () => {
      const user = await newUser();
      const authenticator = new SoftwareAuthenticator(origin);
      await registered(user, authenticator);

      const res = await signIn(authenticator);
      expect(res.status, res.text).to.equal(302);
      expect(res.location).to.equal(SIGNED_IN_LOCATION);
      expect(kit.completed).to.deep.equal([{ userId: user.userId, orgId: user.orgId, amr: ['hwk', 'user'] }]);
      const sessionCookie = res.headers.getSetCookie().find((c) => c.startsWith(`${TEST_SESSION_COOKIE}=`))!;
      const session = kit.sessionByCookie(sessionCookie.split(';')[0]!.split('=')[1]!);
      expect(session?.userId).to.equal(user.userId);
      expect(session?.amr).to.deep.equal(['hwk', 'user']);

      const events = await stack.store.readStream(oauthStreams.userCredentials(user.userId));
      expect(events.filter((e) => e.type === 'PasskeyUsed').map((e) => e.data)).to.deep.equal([
        { userId: user.userId, credentialId: authenticator.id, counter: 2 },
      ]);
    });

    it('accepts a JSON body with the CSRF header too', async () => {
      const user = await newUser();
      const authenticator = new SoftwareAuthenticator(origin);
      await registered(user, authenticator);
      const browser = new TestBrowser(app.baseUrl);
      const options = await signInOptions(browser);
      const res = await browser.postJson('/signin/passkey/verify', { credential: authenticator.get(options) }, csrf());
      expect(res.status, res.text).to.equal(302);
      expect(kit.completed.map((c) => c.userId)).to.deep.equal([user.userId]);
    });

    it('signs in again and again with an authenticator that keeps no counter (0)', async () => {
      const user = await newUser();
      const authenticator = new SoftwareAuthenticator(origin, { counter: 0 });
      await registered(user, authenticator);
      expect((await signIn(authenticator)).status).to.equal(302);
      expect((await signIn(authenticator)).status).to.equal(302);
      expect(kit.completed).to.have.length(2);
    });

    it('refuses an assertion made for another origin', async () => {
      const authenticator = new SoftwareAuthenticator(origin);
      await registered(await newUser(), authenticator);
      expectRefused(await signIn(authenticator, { origin: 'https://evil.example' }));
    });

    it('refuses an assertion for another RP ID', async () => {
      const authenticator = new SoftwareAuthenticator(origin);
      await registered(await newUser(), authenticator);
      expectRefused(await signIn(authenticator, { rpId: 'evil.example' }));
    });

    it('refuses an assertion of a challenge this browser was not given', async () => {
      const authenticator = new SoftwareAuthenticator(origin);
      await registered(await newUser(), authenticator);
      expectRefused(await signIn(authenticator, { challenge: randomBytes(32).toString('base64url') }));
    });

    it("refuses an assertion answering another browser's challenge", async () => {
      const authenticator = new SoftwareAuthenticator(origin);
      await registered(await newUser(), authenticator);
      const victim = new TestBrowser(app.baseUrl);
      const attacker = new TestBrowser(app.baseUrl);
      await signInOptions(attacker);
      const options = await signInOptions(victim);
      expectRefused(await postAssertion(attacker, authenticator.get(options)));
    });

    it('refuses an assertion without user verification', async () => {
      const authenticator = new SoftwareAuthenticator(origin);
      await registered(await newUser(), authenticator);
      expectRefused(await signIn(authenticator, { userVerified: false }));
    });

    it('refuses a replayed challenge, even for an authenticator without a counter', async () => {
      const authenticator = new SoftwareAuthenticator(origin, { counter: 0 });
      await registered(await newUser(), authenticator);
      const browser = new TestBrowser(app.baseUrl);
      const options = await signInOptions(browser);
      const asItWas = browser.snapshot();
      const assertion = authenticator.get(options);
      expect((await postAssertion(browser, assertion)).status).to.equal(302);
      kit.completed.length = 0;
      // The same assertion and the same cookies, exactly as first sent.
      const replay = await postAssertion(asItWas, assertion);
      expectRefused(replay);
    });

    it('refuses a counter that went back (a cloned authenticator) and records nothing', async () => {
      const user = await newUser();
      const authenticator = new SoftwareAuthenticator(origin, { counter: 10 });
      await registered(user, authenticator);
      expect((await signIn(authenticator)).status).to.equal(302);
      kit.completed.length = 0;
      authenticator.counter = 5;
      expectRefused(await signIn(authenticator));
      const used = (await stack.store.readStream(oauthStreams.userCredentials(user.userId))).filter((e) => e.type === 'PasskeyUsed');
      expect(used.map((e) => (e.data as { counter: number }).counter)).to.deep.equal([11]);
    });

    it('refuses an unknown credential with the same generic error as a bad signature', async () => {
      const unknown = await signIn(new SoftwareAuthenticator(origin));
      expectRefused(unknown);
      const authenticator = new SoftwareAuthenticator(origin);
      await registered(await newUser(), authenticator);
      const wrongOrigin = await signIn(authenticator, { origin: 'https://evil.example' });
      expect(wrongOrigin.text).to.equal(unknown.text);
    });

    it('needs the CSRF token for the options and the verification', async () => {
      const authenticator = new SoftwareAuthenticator(origin);
      await registered(await newUser(), authenticator);
      const browser = new TestBrowser(app.baseUrl);
      expect((await browser.postJson('/signin/passkey/options', {})).status).to.equal(403);
      const options = await signInOptions(browser);
      const res = await postAssertion(browser, authenticator.get(options), {});
      expect(res.status).to.equal(403);
      expect(kit.completed).to.deep.equal([]);
    });
  });
});
