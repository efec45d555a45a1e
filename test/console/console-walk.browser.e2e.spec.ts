// The console walked in headless Chromium, as an admin and others would: every page of the walk
// is checked with axe-core (no serious or critical violation), refused by no content security
// policy, and screenshotted at 390 x 844 and 1280 x 800 (test-artifacts/console/).
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { requireComponent } from '../support/components.js';
import { startStack, type Stack } from '../support/stack.js';
import { CHROMIUM_PATH, ConsoleBrowser, chromiumAvailable, expectConsoleHeaders } from './support/console-browser.js';

describe('console walk in headless Chromium', function () {
  this.timeout(120_000);
  let stack: Stack | undefined;
  let chrome: ConsoleBrowser | undefined;
  let orgId: number;
  let admin: { userId: number; email: string; password: string | null };
  let adminPage: Page;

  before(async function () {
    requireComponent(this, 'Chromium', await chromiumAvailable(), `no executable at ${CHROMIUM_PATH}: install Debian's chromium or set CHROMIUM_PATH`);
    stack = await startStack({ label: 'console_walk' });
    ({ orgId } = await stack.seed.tenant());
    admin = await stack.seed.user(orgId, { roles: ['admin', 'self_invite'], firstName: 'Ada', lastName: 'Admin' });
    chrome = await ConsoleBrowser.launch(stack.baseUrl);
  });
  after(async () => {
    await chrome?.close();
    await stack?.stop();
  });

  it('an admin signs in from /settings and comes back to it', async () => {
    adminPage = await chrome!.newPage();
    await chrome!.signIn(adminPage, admin.email, admin.password!, '/settings');
    expect(new URL(adminPage.url()).pathname).to.equal('/settings');
    const response = await adminPage.reload();
    expectConsoleHeaders(response, '/settings');
    expect(await adminPage.getByRole('heading', { level: 1 }).textContent()).to.equal('Settings');
    await chrome!.check(adminPage, 'settings');
  });

  it('the skip link takes keyboard focus first and moves it to the page', async () => {
    await adminPage.goto('/settings');
    await adminPage.keyboard.press('Tab');
    expect(await adminPage.evaluate<string>('document.activeElement.textContent')).to.equal('Skip to main content');
    await adminPage.keyboard.press('Enter');
    expect(await adminPage.evaluate<string>('document.activeElement.id')).to.equal('main');
  });

  it('a host who is not an admin gets the 403 page on /settings', async () => {
    const host = await stack!.seed.user(orgId, { roles: ['self_invite'] });
    const page = await chrome!.newPage();
    await chrome!.signIn(page, host.email, host.password!, '/settings');
    const response = await page.reload();
    expect(response?.status()).to.equal(403);
    expectConsoleHeaders(response, '403 page');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).to.equal('You do not have access to this page');
    await chrome!.check(page, 'settings-403');
  });
});
