// The browser script in a real browser: Chromium (playwright-core, CHROMIUM_PATH or the system's
// chromium) with a CDP virtual authenticator runs /signin/passkey.js on the real sign-in and
// account page markup, under the pages' real Content-Security-Policy (script-src 'self'), against
// the passkey routes with a SignInKit test double. The issuer is http://localhost:{port}: browsers
// refuse an IP address as a WebAuthn RP ID, and localhost is a secure context.
import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { chromium, type Browser as Chromium, type Page } from 'playwright-core';
import { startStack, type Stack } from '../../support/stack.js';
import { passkeyRoutes } from '../../../command-service/sign-in/passkeys/passkey-routes.js';
import { sendPage } from '../../../command-service/sign-in/page-response.js';
import { signInPage } from '../../../command-service/sign-in/pages/sign-in-page.js';
import { accountPage } from '../../../command-service/sign-in/pages/account-page.js';
import { oauthStreams } from '../../../shared/oauth/oauth-events.js';
import { SIGNED_IN_LOCATION, TEST_SESSION_COOKIE, TestSignInKit } from './support/test-sign-in-kit.js';
import { serveMethod, type MethodApp } from './support/method-app.js';
import { attachVirtualAuthenticator } from '../../support/virtual-authenticator.js';

function chromiumPath(): string | null {
  const candidates = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'];
  return candidates.find((p): p is string => typeof p === 'string' && p !== '' && existsSync(p)) ?? null;
}

describe('passkeys in a real browser (e2e, Chromium with a virtual authenticator)', function () {
  this.timeout(90_000);
  let stack: Stack;
  let kit: TestSignInKit;
  let app: MethodApp;
  let browser: Chromium;
  let baseUrl: string;
  let orgId: number;

  before(async function () {
    const executablePath = chromiumPath();
    // CI installs Chromium (.ci/chromium.sh); a machine without one cannot run this suite.
    if (executablePath === null) this.skip();
    stack = await startStack({ label: 'passkey-browser' });
    kit = new TestSignInKit();
    app = await serveMethod(
      stack,
      kit,
      (deps, testKit) => {
        const router = passkeyRoutes(deps, testKit);
        router.get('/signin', (ctx) => {
          sendPage(ctx, signInPage({ csrfToken: testKit.csrfToken(ctx), email: '', error: null, federationName: null }));
        });
        router.get('/account', (ctx) => {
          sendPage(ctx, accountPage({ csrfToken: testKit.csrfToken(ctx), email: null, totpEnrolled: false, passkeyIds: [], mayChangeAuthenticators: true, passkeysRemovable: true }));
        });
        router.get(SIGNED_IN_LOCATION, (ctx) => {
          ctx.body = 'signed in';
        });
        return router;
      },
      (serverUrl) => ({ ...stack.oauth, issuer: serverUrl.replace('127.0.0.1', 'localhost') }),
    );
    baseUrl = app.baseUrl.replace('127.0.0.1', 'localhost');
    orgId = (await stack.seed.tenant()).orgId;
    browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
  });

  after(async () => {
    await browser?.close();
    await app?.close();
    await stack?.stop();
  });

  /** A page with a virtual platform authenticator (resident keys, user verification) attached. */
  async function pageWithAuthenticator(): Promise<{ page: Page; problems: string[] }> {
    const context = await browser.newContext();
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error' && !/style\.css|Failed to load resource/.test(message.text())) problems.push(message.text());
    });
    await attachVirtualAuthenticator(page);
    return { page, problems };
  }

  it('registers a passkey from the account page and signs in with it from the sign-in page', async () => {
    const { userId } = await stack.seed.user(orgId);
    const { page, problems } = await pageWithAuthenticator();
    const session = kit.startSession({ userId, orgId }).split('=')[1]!;
    await page.context().addCookies([{ name: TEST_SESSION_COOKIE, value: session, url: baseUrl }]);

    await page.goto(`${baseUrl}/account`);
    const registered = page.waitForResponse((r) => r.url().endsWith('/account/passkeys/verify'));
    // On success the script reloads the account page (to show the new passkey).
    const reloaded = page.waitForEvent('load');
    await page.click('#passkey-register');
    expect((await registered).status()).to.equal(201);
    await reloaded;
    const events = await stack.store.readStream(oauthStreams.userCredentials(userId));
    expect(events.map((e) => e.type)).to.include('PasskeyRegistered');

    // A fresh sign-in: no session cookie, only the passkey on the authenticator.
    await page.context().clearCookies();
    kit.completed.length = 0;
    await page.goto(`${baseUrl}/signin`);
    await Promise.all([page.waitForURL(`${baseUrl}${SIGNED_IN_LOCATION}`), page.click('#passkey-signin')]);
    expect(kit.completed).to.deep.equal([{ userId, orgId, amr: ['hwk', 'user'] }]);
    expect(problems).to.deep.equal([]);
  });

  it('tells the user when the sign-in did not complete (no passkey on this authenticator)', async () => {
    const { page, problems } = await pageWithAuthenticator();
    await page.goto(`${baseUrl}/signin`);
    await page.click('#passkey-signin');
    await page.waitForSelector('.passkey-status');
    expect(await page.textContent('.passkey-status')).to.match(/did not complete/);
    expect(await page.isEnabled('#passkey-signin')).to.equal(true);
    expect(problems).to.deep.equal([]);
  });
});
