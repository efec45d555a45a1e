// Federated sign-in end to end between two instances of this service: the upstream is a stack
// of its own (its own database) where the downstream is a confidential client; the downstream
// is a gateway configured with the upstream as FEDERATED_ISSUER. The browser goes through the
// real pages of both: the downstream's sign-in page, the upstream's sign-in and consent pages,
// and back to the downstream's callback. One browser per site (the two run on 127.0.0.1 with
// the same cookie names; a real browser would keep two hosts apart).
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { decodeJwt } from 'jose';
import { startStack, type Server, type Stack } from '../../support/stack.js';
import { Browser, csrfTokenOf, type BrowserResponse } from '../support/browser.js';
import { authorizePath, submitConsent, submitPassword } from '../support/sign-in-driver.js';
import { oauthStreams } from '../../../shared/oauth/oauth-events.js';
import { sha256Hex } from '../../../shared/oauth/opaque-credentials.js';
import { s256Challenge } from '../../../shared/oauth/pkce.js';
import { sessionHashOf } from '../../../shared/sign-in/session-decider.js';
import { federatedLinkDecider } from '../../../shared/sign-in/federated/federated-link-decider.js';

const CALLBACK_PATH = '/signin/federated/callback';

describe('federated sign-in (e2e, upstream = another instance of this service)', function () {
  this.timeout(60_000);
  let upstream: Stack;
  let downstream: Stack;
  let gateway: Server;
  let upstreamOrg: number;
  let downstreamOrg: number;

  before(async () => {
    [upstream, downstream] = await Promise.all([startStack({ label: 'fed-upstream' }), startStack({ label: 'fed-downstream' })]);
    upstreamOrg = (await upstream.seed.tenant()).orgId;
    downstreamOrg = (await downstream.seed.tenant()).orgId;
    gateway = await downstream.serve({
      federation: async (baseUrl) => {
        const client = await upstream.seed.client(upstreamOrg, { clientType: 'confidential', redirectUris: [baseUrl + CALLBACK_PATH] });
        return { issuer: upstream.baseUrl, clientId: client.clientId, clientSecret: client.clientSecret, displayName: 'Upstream' };
      },
    });
  });

  after(async () => {
    await Promise.all([upstream?.stop(), downstream?.stop()]);
  });

  const email = () => `fed-${randomUUID().slice(0, 8)}@example.com`;

  /** A user of the upstream (who signs in there with a password). */
  async function upstreamUser(address = email()) {
    return upstream.seed.user(upstreamOrg, { email: address });
  }

  /** Links the upstream user to a downstream user, as a first sign-in by email would have. */
  async function linkAccounts(upstreamUserId: number, downstreamUserId: number): Promise<void> {
    const result = await downstream.deps.handler.handle(
      oauthStreams.userCredentials(downstreamUserId),
      federatedLinkDecider,
      { type: 'LinkFederatedIdentity', data: { userId: downstreamUserId, orgId: downstreamOrg, issuer: upstream.baseUrl, subject: String(upstreamUserId) } },
      { correlationId: randomUUID(), causationId: null, actor: { kind: 'operator' }, now: new Date() },
    );
    await downstream.deps.watermark.waitFor(result.position, 5000);
  }

  /** The downstream's sign-in page and its federated button: returns the redirect to the upstream. */
  async function startFederated(browser: Browser): Promise<BrowserResponse> {
    const page = await browser.get('/signin');
    expect(page.status).to.equal(200);
    expect(page.text).to.include('action="/signin/federated"');
    expect(page.text).to.include('Sign in with Upstream');
    const res = await browser.post('/signin/federated', { csrf: csrfTokenOf(page.text) });
    expect(res.status, res.text).to.equal(302);
    return res;
  }

  /** Signs in at the upstream (password, consent) from its authorize URL; returns the downstream callback URL. */
  async function throughUpstream(authorizeUrl: string, user: { email: string; password: string | null }, consent: 'allow' | 'deny' = 'allow'): Promise<string> {
    const browser = new Browser(upstream.baseUrl);
    let location = authorizeUrl;
    for (let hop = 0; hop < 8; hop++) {
      if (new URL(location, upstream.baseUrl).pathname === CALLBACK_PATH) return location;
      const path = location.startsWith(upstream.baseUrl) ? location.slice(upstream.baseUrl.length) : location;
      if (path === '/signin') location = await submitPassword(browser, user.email, user.password!);
      else if (path === '/consent') location = await submitConsent(browser, consent);
      else if (path.startsWith('/api/oauth/authorize?')) {
        const res = await browser.get(path);
        expect(res.status, res.text).to.equal(302);
        location = res.location!;
      } else throw new Error(`unexpected stop at the upstream: ${location}`);
    }
    throw new Error('too many hops at the upstream');
  }

  /** The whole federated sign-in; returns the downstream browser and the callback's answer. */
  async function federatedSignIn(user: { email: string; password: string | null }, browser = new Browser(gateway.baseUrl)) {
    const start = await startFederated(browser);
    const callback = await throughUpstream(start.location!, user);
    const res = await browser.get(callback);
    return { browser, res, callback };
  }

  /** The downstream session this browser holds, from its sign-in session stream. */
  async function sessionOf(browser: Browser): Promise<{ userId: number; amr: string[] } | null> {
    const hash = sessionHashOf(browser.jar.get('gp_session'));
    if (hash === null) return null;
    const events = await downstream.store.readStream(oauthStreams.signInSession(hash));
    const started = events.find((e) => e.type === 'SignInSessionStarted');
    return started ? (started.data as { userId: number; amr: string[] }) : null;
  }

  async function linkEvents(userId: number) {
    return (await downstream.store.readStream(oauthStreams.userCredentials(userId))).filter((e) => e.type === 'FederatedIdentityLinked');
  }

  describe('starting', () => {
    it('redirects to the upstream authorize endpoint with PKCE S256, state, nonce and the callback, keeping them in a sealed HttpOnly cookie', async () => {
      const browser = new Browser(gateway.baseUrl);
      const res = await startFederated(browser);
      const location = new URL(res.location!);
      expect(`${location.origin}${location.pathname}`).to.equal(`${upstream.baseUrl}/api/oauth/authorize`);
      const params = location.searchParams;
      expect(params.get('response_type')).to.equal('code');
      expect(params.get('redirect_uri')).to.equal(gateway.baseUrl + CALLBACK_PATH);
      expect(params.get('code_challenge_method')).to.equal('S256');
      expect(params.get('code_challenge')).to.match(/^[A-Za-z0-9_-]{43}$/);
      expect(params.get('state')).to.be.a('string').with.length.above(20);
      expect(params.get('nonce')).to.be.a('string').with.length.above(20);
      expect(params.get('scope')?.split(' ')).to.include.members(['openid', 'email']);
      expect(res.headers.get('cache-control')).to.equal('no-store');
      const cookie = res.setCookies.find((c) => c.name === 'gp_federated');
      expect(cookie?.attributes).to.include({ httponly: true, samesite: 'Lax' });
      expect(cookie?.value).not.to.include(params.get('state')!);
    });

    it('shows a generic page when the upstream cannot be reached, and sets no flow cookie', async () => {
      const unreachable = await downstream.serve({
        federation: { issuer: 'http://127.0.0.1:9', clientId: 'svc_00000000000000000000000000000000', clientSecret: null, displayName: 'Down' },
      });
      try {
        const browser = new Browser(unreachable.baseUrl);
        const page = await browser.get('/signin');
        const res = await browser.post('/signin/federated', { csrf: csrfTokenOf(page.text) });
        expect(res.status).to.equal(502);
        expect(res.text).to.include('The sign-in provider is not available right now.');
        expect(res.setCookies.map((c) => c.name)).not.to.include('gp_federated');
      } finally {
        await unreachable.close();
      }
    });

    it('needs the CSRF token', async () => {
      const browser = new Browser(gateway.baseUrl);
      await browser.get('/signin');
      const res = await browser.post('/signin/federated', {});
      expect(res.status).to.equal(403);
      expect(res.location).to.equal(null);
      const wrong = await browser.post('/signin/federated', { csrf: 'not-the-token' });
      expect(wrong.status).to.equal(403);
    });
  });

  describe('signing in', () => {
    it('signs a linked upstream account in by (issuer, subject), with amr fed, whatever its email', async () => {
      const up = await upstreamUser();
      // A different address downstream: only the link counts.
      const down = await downstream.seed.user(downstreamOrg, { email: email() });
      await linkAccounts(up.userId, down.userId);

      const { browser, res } = await federatedSignIn(up);
      expect(res.status, res.text).to.equal(302);
      expect(res.location).to.equal('/account');
      expect(await sessionOf(browser)).to.include({ userId: down.userId }).and.to.have.deep.property('amr', ['fed']);
      const account = await browser.get('/account');
      expect(account.status).to.equal(200);
      expect(account.text).to.include(down.email);
    });

    it('carries amr fed into the id_token of a downstream authorization', async () => {
      const up = await upstreamUser();
      const down = await downstream.seed.user(downstreamOrg);
      await linkAccounts(up.userId, down.userId);
      const client = await downstream.seed.client(downstreamOrg, { redirectUris: ['https://app.example.test/callback'] });
      const verifier = randomUUID() + randomUUID();
      const browser = new Browser(gateway.baseUrl);
      const authorize = await browser.get(
        authorizePath({ clientId: client.clientId, redirectUri: client.redirectUri, scope: 'openid', codeChallenge: s256Challenge(verifier), nonce: 'n-1' }),
      );
      expect(authorize.status).to.equal(302);
      expect(authorize.location).to.equal('/signin');

      const { res } = await federatedSignIn(up, browser);
      expect(res.status, res.text).to.equal(302);
      let location = res.location!;
      for (let hop = 0; hop < 4 && !location.startsWith(client.redirectUri); hop++) {
        location = location === '/consent' ? await submitConsent(browser) : (await browser.get(location)).location!;
      }
      const code = new URL(location).searchParams.get('code')!;
      const token = await fetch(`${gateway.baseUrl}/api/oauth/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: client.redirectUri, code_verifier: verifier, client_id: client.clientId }),
      });
      expect(token.status).to.equal(200);
      const claims = decodeJwt(((await token.json()) as { id_token: string }).id_token);
      expect(claims.sub).to.equal(String(down.userId));
      expect(claims.amr).to.deep.equal(['fed']);
    });

    it('does not link by an email address the upstream says is unverified (this service sends email_verified false)', async () => {
      const address = email();
      const up = await upstreamUser(address);
      const down = await downstream.seed.user(downstreamOrg, { email: address });
      const { browser, res } = await federatedSignIn(up);
      expect(res.status).to.equal(403);
      expect(res.text).to.include('There is no account for this sign-in.');
      expect(await sessionOf(browser)).to.equal(null);
      expect(await linkEvents(down.userId)).to.deep.equal([]);
    });

    it('links by email on first sign-in when the operator trusts the upstream\'s addresses, then by (issuer, subject)', async () => {
      const trusting = await downstream.serve({
        federation: async (baseUrl) => {
          const client = await upstream.seed.client(upstreamOrg, { clientType: 'confidential', redirectUris: [baseUrl + CALLBACK_PATH] });
          return { issuer: upstream.baseUrl, clientId: client.clientId, clientSecret: client.clientSecret, displayName: 'Upstream', trustUnverifiedEmail: true };
        },
      });
      try {
        const address = email();
        const up = await upstreamUser(address);
        const down = await downstream.seed.user(downstreamOrg, { email: address.toUpperCase() });
        const first = await federatedSignIn(up, new Browser(trusting.baseUrl));
        expect(first.res.status, first.res.text).to.equal(302);
        expect(await sessionOf(first.browser)).to.include({ userId: down.userId }).and.to.have.deep.property('amr', ['fed']);
        expect(await linkEvents(down.userId)).to.have.length(1);
        // The link, not the address, signs the next one in: the untrusting gateway now accepts it too.
        const again = await federatedSignIn(up);
        expect(again.res.status, again.res.text).to.equal(302);
        expect(await sessionOf(again.browser)).to.include({ userId: down.userId });
        expect(await linkEvents(down.userId)).to.have.length(1);
      } finally {
        await trusting.close();
      }
    });

    it('refuses an upstream account that matches no local account, with a generic page', async () => {
      const up = await upstreamUser();
      const { browser, res } = await federatedSignIn(up);
      expect(res.status).to.equal(403);
      expect(res.headers.get('cache-control')).to.equal('no-store');
      expect(res.text).to.include('There is no account for this sign-in.');
      expect(await sessionOf(browser)).to.equal(null);
    });
  });

  describe('the callback', () => {
    async function upstreamCallback(browser: Browser) {
      const up = await upstreamUser();
      const down = await downstream.seed.user(downstreamOrg);
      await linkAccounts(up.userId, down.userId);
      const start = await startFederated(browser);
      return new URL(await throughUpstream(start.location!, up));
    }

    async function codeRedeemed(code: string): Promise<boolean> {
      const events = await upstream.store.readStream(oauthStreams.authorizationCode(sha256Hex(code)));
      expect(events.map((e) => e.type)).to.include('AuthorizationCodeIssued');
      return events.some((e) => e.type === 'AuthorizationCodeRedeemed');
    }

    it('refuses a state that is not the one this browser was given, and leaves the code unredeemed', async () => {
      const browser = new Browser(gateway.baseUrl);
      const callback = await upstreamCallback(browser);
      const code = callback.searchParams.get('code')!;
      callback.searchParams.set('state', 'forged-state');
      const res = await browser.get(callback.href);
      expect(res.status).to.equal(400);
      expect(res.text).to.include('This sign-in could not be completed.');
      expect(await sessionOf(browser)).to.equal(null);
      expect(await codeRedeemed(code)).to.equal(false);
    });

    it('refuses a callback opened in another browser (no flow cookie: login CSRF)', async () => {
      const callback = await upstreamCallback(new Browser(gateway.baseUrl));
      const victim = new Browser(gateway.baseUrl);
      const res = await victim.get(callback.href);
      expect(res.status).to.equal(400);
      expect(await sessionOf(victim)).to.equal(null);
      expect(await codeRedeemed(callback.searchParams.get('code')!)).to.equal(false);
    });

    it('refuses the same callback with the same flow cookie a second time (the code is spent upstream)', async () => {
      const browser = new Browser(gateway.baseUrl);
      const callback = await upstreamCallback(browser);
      const flowCookie = browser.jar.get('gp_federated')!;
      const first = await browser.get(callback.href);
      expect(first.status, first.text).to.equal(302);
      expect(browser.jar.get('gp_federated')).to.equal(undefined);
      const replay = new Browser(gateway.baseUrl);
      replay.jar.set('gp_federated', flowCookie);
      const res = await replay.get(callback.href);
      expect(res.status).to.equal(400);
      expect(await sessionOf(replay)).to.equal(null);
    });

    it('refuses an error answer from the upstream (consent denied)', async () => {
      const browser = new Browser(gateway.baseUrl);
      const start = await startFederated(browser);
      const denied = new URL(await throughUpstream(start.location!, await upstreamUser(), 'deny'));
      expect(denied.searchParams.get('error')).to.equal('access_denied');
      const res = await browser.get(denied.href);
      expect(res.status).to.equal(400);
      expect(await sessionOf(browser)).to.equal(null);
    });
  });
});
