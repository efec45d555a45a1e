// Federated sign-in end to end with oidc-provider (npm) as the upstream: an independent OpenID
// Provider, so linking by email is tested against claims the test sets per upstream account
// (email_verified true, false, the string "true", or absent), which the other e2e suite cannot do
// (its upstream, this service, always says false). The browser drives the downstream's real sign-in
// page and callback over HTTP; the upstream's sign-in and consent are programmatic interactions
// (support/oidc-provider-upstream.ts). Every scenario runs twice: with the email claims in userinfo
// only (oidc-provider's default for the code flow) and in the id_token too.
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { startStack, type Server, type Stack } from '../../support/stack.js';
import { Browser, csrfTokenOf, type BrowserResponse } from '../support/browser.js';
import { oauthStreams } from '../../../shared/oauth/oauth-events.js';
import { sessionHashOf } from '../../../shared/sign-in/session-decider.js';
import { startOidcProviderUpstream, type OidcProviderUpstream, type UpstreamAccountClaims } from './support/oidc-provider-upstream.js';

const CALLBACK_PATH = '/signin/federated/callback';
const NO_ACCOUNT = 'There is no account for this sign-in.';

describe('federated sign-in (e2e, upstream = oidc-provider)', function () {
  this.timeout(60_000);
  let downstream: Stack;
  let orgId: number;
  const upstreams: OidcProviderUpstream[] = [];
  const gateways: Server[] = [];

  before(async () => {
    downstream = await startStack({ label: 'fed-oidc-provider' });
    orgId = (await downstream.seed.tenant()).orgId;
  });

  after(async () => {
    await Promise.all(gateways.map((g) => g.close()));
    await Promise.all(upstreams.map((u) => u.close()));
    await downstream?.stop();
  });

  /** A downstream gateway federated with a fresh oidc-provider (FEDERATED_TRUST_EMAIL as `trustEmail`). */
  async function federatedGateway(options: { claimsInIdToken: boolean; trustEmail: boolean }) {
    const upstream = await startOidcProviderUpstream({ claimsInIdToken: options.claimsInIdToken });
    upstreams.push(upstream);
    const gateway = await downstream.serve({
      federation: async (baseUrl) => {
        await upstream.register(baseUrl + CALLBACK_PATH);
        return {
          issuer: upstream.issuer,
          clientId: upstream.clientId,
          clientSecret: upstream.clientSecret,
          displayName: 'Upstream',
          trustUnverifiedEmail: options.trustEmail,
        };
      },
    });
    gateways.push(gateway);
    return { upstream, gateway };
  }

  const email = () => `fed-op-${randomUUID().slice(0, 8)}@example.com`;

  /** Sign-in page, federated button, the upstream's sign-in as `subject`, and the callback's answer. */
  async function federatedSignIn(setup: { upstream: OidcProviderUpstream; gateway: Server }, subject: string): Promise<{ browser: Browser; res: BrowserResponse }> {
    const browser = new Browser(setup.gateway.baseUrl);
    const page = await browser.get('/signin');
    expect(page.text).to.include('action="/signin/federated"');
    const start = await browser.post('/signin/federated', { csrf: csrfTokenOf(page.text) });
    expect(start.status, start.text).to.equal(302);
    expect(start.location!.startsWith(`${setup.upstream.issuer}/`)).to.equal(true);
    const callback = await setup.upstream.signIn(start.location!, subject);
    expect(new URL(callback).pathname).to.equal(CALLBACK_PATH);
    const res = await browser.get(callback);
    return { browser, res };
  }

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

  /** A local user, and an upstream account with the same address and these other email claims. */
  async function sameAddress(upstream: OidcProviderUpstream, claims: Omit<UpstreamAccountClaims, 'email'>) {
    const address = email();
    const local = await downstream.seed.user(orgId, { email: address });
    const subject = upstream.account({ email: address.toUpperCase(), ...claims });
    return { local, subject };
  }

  async function expectLinkedAndSignedIn(setup: { upstream: OidcProviderUpstream; gateway: Server }, claims: Omit<UpstreamAccountClaims, 'email'>) {
    const { local, subject } = await sameAddress(setup.upstream, claims);
    const { browser, res } = await federatedSignIn(setup, subject);
    expect(res.status, res.text).to.equal(302);
    expect(res.location).to.equal('/account');
    expect(await sessionOf(browser)).to.include({ userId: local.userId }).and.to.have.deep.property('amr', ['fed']);
    const links = await linkEvents(local.userId);
    expect(links.map((e) => e.data)).to.deep.equal([{ userId: local.userId, orgId, issuer: setup.upstream.issuer, subject }]);
  }

  async function expectNotLinked(setup: { upstream: OidcProviderUpstream; gateway: Server }, claims: Omit<UpstreamAccountClaims, 'email'>) {
    const { local, subject } = await sameAddress(setup.upstream, claims);
    const { browser, res } = await federatedSignIn(setup, subject);
    expect(res.status, res.text).to.equal(403);
    expect(res.headers.get('cache-control')).to.equal('no-store');
    expect(res.text).to.include(NO_ACCOUNT);
    expect(await sessionOf(browser)).to.equal(null);
    expect(await linkEvents(local.userId)).to.deep.equal([]);
    // No account enumeration: the same answer as for a verified address no local user has.
    const stranger = await federatedSignIn(setup, setup.upstream.account({ email: email(), email_verified: true }));
    expect(stranger.res.status).to.equal(res.status);
    expect(stranger.res.text).to.equal(res.text);
  }

  for (const claimsInIdToken of [false, true]) {
    describe(claimsInIdToken ? 'email claims in the id_token' : 'email claims from userinfo only', () => {
      describe('without FEDERATED_TRUST_EMAIL', () => {
        let setup: { upstream: OidcProviderUpstream; gateway: Server };
        before(async () => {
          setup = await federatedGateway({ claimsInIdToken, trustEmail: false });
        });

        it('(a) links an upstream account with email_verified true to the local account with that address, and signs it in', async () => {
          const before = setup.upstream.userInfoRequests();
          await expectLinkedAndSignedIn(setup, { email_verified: true });
          // The claims came the way this block says (userinfo is asked only when the id_token has no usable address).
          expect(setup.upstream.userInfoRequests() - before).to.equal(claimsInIdToken ? 0 : 1);
        });

        it('(a) and signs it in by the link the next time', async () => {
          const { local, subject } = await sameAddress(setup.upstream, { email_verified: true });
          expect((await federatedSignIn(setup, subject)).res.status).to.equal(302);
          const again = await federatedSignIn(setup, subject);
          expect(again.res.status, again.res.text).to.equal(302);
          expect(await sessionOf(again.browser)).to.include({ userId: local.userId });
          expect(await linkEvents(local.userId)).to.have.length(1);
        });

        it('(b) does not link when the upstream omits email_verified', async () => {
          await expectNotLinked(setup, {});
        });

        it('(c) does not link when the upstream says email_verified false', async () => {
          await expectNotLinked(setup, { email_verified: false });
        });

        it('takes email_verified "true" (a string, as some providers send it) as verified', async () => {
          await expectLinkedAndSignedIn(setup, { email_verified: 'true' });
        });

        it('does not take other strings or values for true', async () => {
          await expectNotLinked(setup, { email_verified: 'false' });
          await expectNotLinked(setup, { email_verified: 'yes' });
          await expectNotLinked(setup, { email_verified: 1 });
        });
      });

      describe('with FEDERATED_TRUST_EMAIL', () => {
        let setup: { upstream: OidcProviderUpstream; gateway: Server };
        before(async () => {
          setup = await federatedGateway({ claimsInIdToken, trustEmail: true });
        });

        it('(d) links when the upstream omits email_verified', async () => {
          await expectLinkedAndSignedIn(setup, {});
        });

        it('links when the upstream says email_verified false (the operator vouches for its addresses)', async () => {
          await expectLinkedAndSignedIn(setup, { email_verified: false });
        });
      });
    });
  }
});
