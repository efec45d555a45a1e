// The sign-in pages in a real browser (headless Chromium through playwright-core): what the
// cookie-jar tests cannot show is that a browser accepts our cookies (Secure, HttpOnly, SameSite)
// on the issuer's origin, submits our forms, follows our redirects and renders pages a person can
// use. One journey, as a user lives it: password sign-in, turning on TOTP from the account page,
// signing out, then an app's authorization with password, TOTP and consent, ending at the app's
// redirect URI (answered inside the browser: no server stands behind it). Screenshots go to test-artifacts/.
import { readFile } from 'node:fs/promises';
import { expect } from 'chai';
import * as client from 'openid-client';
import { chromium, type Browser, type Page, type Response } from 'playwright-core';
import { requireComponent } from '../support/components.js';
import { startStack, type Stack } from '../support/stack.js';
import { totpCandidates } from '../sign-in/support/sign-in-driver.js';
import { SCOPE_DESCRIPTIONS, type OAuthScope } from '../../shared/oauth/scopes.js';
import { CHROMIUM_PATH, chromiumAvailable, documentLanguage, fakeOrigin, fileSize, formControlLabels, freshArtifact } from './support/chromium.js';
import { discoverRelyingParty, type RelyingParty } from './support/relying-party.js';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const CLIENT_NAME = 'Lobby Kiosk App';
const REDIRECT_URI = 'https://kiosk.example.test/callback';
const SIGNED_OUT_URI = 'https://kiosk.example.test/signed-out';
const SCOPES: readonly OAuthScope[] = ['openid', 'profile', 'email', 'offline_access'];

/**
 * Clicks a submit button; resolves with the response to the form's POST to `path` (a redirect
 * included) once the document the browser ends up on has loaded. Waiting for the main frame to
 * commit a new document matters: a 400 answer stays on the same URL, and the old document counts
 * as loaded until the new one replaces it.
 */
async function submitForm(page: Page, button: string, path: string): Promise<Response> {
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === path),
    page.waitForEvent('framenavigated', { predicate: (frame) => frame === page.mainFrame() }),
    page.getByRole('button', { name: button, exact: true }).click(),
  ]);
  await page.waitForLoadState('load');
  return response;
}

/**
 * Types TOTP codes of the previous, current and next step until the service takes one (`accepted`
 * says from the POST's status): each step is accepted once per user, and the first attempt may
 * straddle a step boundary. Fails when none is taken.
 */
async function enterTotp(page: Page, secret: string, field: string, button: string, path: string, accepted: (status: number) => boolean): Promise<void> {
  const statuses: number[] = [];
  for (const code of await totpCandidates(secret)) {
    await page.getByLabel(field).fill(code);
    const status = (await submitForm(page, button, path)).status();
    statuses.push(status);
    if (accepted(status)) return;
  }
  throw new Error(`no TOTP code was accepted at ${path} (statuses ${statuses.join(', ')})`);
}

async function expectAccessibleForm(page: Page, minimumControls: number): Promise<void> {
  expect(await documentLanguage(page), `lang of ${page.url()}`).to.equal('en');
  const report = await formControlLabels(page);
  expect(report.unlabelled, `unlabelled controls on ${page.url()}`).to.deep.equal([]);
  expect(report.checked, `labelled controls on ${page.url()}`).to.be.at.least(minimumControls);
}

async function expectScreenshot(file: string): Promise<void> {
  expect(await fileSize(file), file).to.be.greaterThan(0);
  expect((await readFile(file)).subarray(0, 8).equals(PNG_SIGNATURE), `${file} is a PNG`).to.equal(true);
}

const pathOf = (page: Page) => new URL(page.url()).pathname;

describe('interop: sign-in pages in headless Chromium', function () {
  // Well under a minute in practice; the slack is for a cold Chromium start on a loaded machine.
  this.timeout(60_000);
  let stack: Stack | undefined;
  let browser: Browser | undefined;

  before(async function () {
    requireComponent(this, 'Chromium', await chromiumAvailable(), `no executable at ${CHROMIUM_PATH}: install Debian's chromium or set CHROMIUM_PATH`);
    stack = await startStack({ label: 'interop_chromium' });
    // Tests run as root, where Chromium's sandbox cannot start.
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ['--no-sandbox'] });
  });
  after(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it('signs in with a password, turns on TOTP at /account/totp, signs out; then authorizes an app with password, TOTP and consent, and the app receives code, state and iss', async () => {
    const s = stack!;
    const { orgId } = await s.seed.tenant();
    const user = await s.seed.user(orgId);
    const registered = await s.seed.client(orgId, { name: CLIENT_NAME, redirectUris: [REDIRECT_URI], postLogoutRedirectUris: [SIGNED_OUT_URI] });
    const rp: RelyingParty = await discoverRelyingParty(s.baseUrl, registered, 'none');
    const shots = {
      signIn: await freshArtifact('sign-in-browser-1-sign-in-page.png'),
      secondFactor: await freshArtifact('sign-in-browser-2-second-factor-page.png'),
      consent: await freshArtifact('sign-in-browser-3-consent-page.png'),
    };

    const context = await browser!.newContext({ baseURL: s.baseUrl, locale: 'en-US' });
    const page = await context.newPage();
    // The app: its origin is answered in the browser, and each page the browser visits there is remembered.
    const app = await fakeOrigin(page, new URL(REDIRECT_URI).origin, '<!doctype html><html lang="en"><title>Kiosk</title><p>Back at the app.</p></html>');

    try {
      // 1. Password sign-in, no app waiting: the account page.
      await page.goto('/signin');
      await page.getByLabel('Email').fill(user.email);
      await page.getByLabel('Password').fill(user.password!);
      await submitForm(page, 'Sign in', '/signin');
      expect(pathOf(page), 'after the password sign-in').to.equal('/account');
      // Chromium keeps the Secure session cookie of an http://127.0.0.1 issuer (a loopback origin
      // is potentially trustworthy), so no localhost detour is needed.
      const session = (await context.cookies(s.baseUrl)).find((c) => c.name === 'gp_session');
      expect(session, 'the session cookie').to.deep.include({ secure: true, httpOnly: true, sameSite: 'Lax', path: '/' });
      expect(await page.locator('#totp-status').textContent()).to.equal('Two-step verification is off.');

      // 2. TOTP enrolment: the secret as the page shows it, the code as an authenticator app computes it.
      await page.getByRole('link', { name: 'Set up an authenticator app' }).click();
      await page.waitForURL('**/account/totp');
      await expectAccessibleForm(page, 1);
      const secret = ((await page.locator('#totp-secret').textContent()) ?? '').replace(/\s+/g, '');
      expect(secret).to.match(/^[A-Z2-7]{32}$/);
      await enterTotp(page, secret, 'Enter the 6-digit code the app shows', 'Turn on', '/account/totp', (status) => status === 200);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).to.equal('Save your recovery codes');
      expect(await page.locator('#recovery-codes li').count()).to.equal(10);
      await page.getByRole('link', { name: /back to your account/ }).click();
      await page.waitForURL('**/account');
      expect(await page.locator('#totp-status').textContent()).to.equal('Two-step verification with an authenticator app is on.');

      // 3. Sign out with the account page's button: the logout endpoint ends a session only for a
      // verified id_token_hint (spec), and no app has one yet. The logout endpoint comes in step 8.
      await submitForm(page, 'Sign out', '/account/sign-out');
      await page.goto('/account');
      expect(pathOf(page), '/account after signing out').to.equal('/signin');

      // 4. An app asks for an authorization: the sign-in page.
      const verifier = client.randomPKCECodeVerifier();
      const state = client.randomState();
      const nonce = client.randomNonce();
      const authorizationUrl = client.buildAuthorizationUrl(rp.config, {
        redirect_uri: REDIRECT_URI,
        scope: SCOPES.join(' '),
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      });
      await page.goto(authorizationUrl.href);
      expect(pathOf(page), 'the authorization starts at').to.equal('/signin');
      await expectAccessibleForm(page, 2);
      await page.screenshot({ path: shots.signIn, fullPage: true });
      await page.getByLabel('Email').fill(user.email);
      await page.getByLabel('Password').fill(user.password!);
      await submitForm(page, 'Sign in', '/signin');

      // 5. The second factor.
      expect(pathOf(page), 'after the password').to.equal('/signin/second-factor');
      await expectAccessibleForm(page, 1);
      await page.screenshot({ path: shots.secondFactor, fullPage: true });
      await enterTotp(page, secret, 'Authentication code', 'Verify', '/signin/second-factor', (status) => status === 302);

      // 6. Consent: who asks, for what; only hidden inputs and two named buttons.
      expect(pathOf(page), 'after the second factor').to.equal('/consent');
      await expectAccessibleForm(page, 0);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).to.equal(`Allow ${CLIENT_NAME} to use your account?`);
      const items = await page.locator('ul[aria-labelledby="scopes-heading"] > li').allTextContents();
      expect(items.map((text) => /\(([^()]+)\)$/.exec(text.trim())?.[1]).sort()).to.deep.equal([...SCOPES].sort());
      for (const scope of SCOPES) expect(items.some((text) => text.includes(SCOPE_DESCRIPTIONS[scope])), `description of ${scope}`).to.equal(true);
      expect(await page.getByText(user.email).count(), 'the consenting user is named').to.be.greaterThan(0);
      await page.screenshot({ path: shots.consent, fullPage: true });
      await page.getByRole('button', { name: 'Allow', exact: true }).click();

      // 7. Back at the app with code, state and iss (RFC 9207).
      await page.waitForURL((url) => url.href.startsWith(`${REDIRECT_URI}?`));
      expect(app.visits.map((u) => u.origin + u.pathname)).to.deep.equal([REDIRECT_URI]);
      const callback = app.visits[0]!;
      expect(callback.searchParams.get('code')).to.be.a('string').and.not.equal('');
      expect(callback.searchParams.get('state')).to.equal(state);
      expect(callback.searchParams.get('iss')).to.equal(s.baseUrl);

      // The code is good: the id_token tells the app how the user signed in.
      const tokens = await client.authorizationCodeGrant(rp.config, callback, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce });
      expect(tokens.claims()).to.deep.include({ sub: String(user.userId), amr: ['pwd', 'otp', 'mfa'], nonce });

      // 8. The app signs the browser out at the logout endpoint with its id_token.
      const state2 = client.randomState();
      await page.goto(client.buildEndSessionUrl(rp.config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: SIGNED_OUT_URI, state: state2 }).href);
      expect(page.url()).to.equal(`${SIGNED_OUT_URI}?state=${state2}`);
      expect(app.visits.map((u) => u.href)).to.deep.equal([callback.href, `${SIGNED_OUT_URI}?state=${state2}`]);
      expect(app.errors).to.deep.equal([]);
      await page.goto('/account');
      expect(pathOf(page), '/account after the logout endpoint').to.equal('/signin');
    } finally {
      await context.close();
    }

    for (const file of Object.values(shots)) await expectScreenshot(file);
  });
});
