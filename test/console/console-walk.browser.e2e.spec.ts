// The console walked in headless Chromium, as an admin and others would: every page of the walk
// is checked with axe-core (no serious or critical violation), refused by no content security
// policy, and screenshotted at 390 x 844 and 1280 x 800 (test-artifacts/console/).
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import * as client from 'openid-client';
import type { Page } from 'playwright-core';
import { requireComponent } from '../support/components.js';
import { passBody, startStack, type Stack, type Tenant } from '../support/stack.js';
import { READ_MODELS } from '../../shared/db/read-models.js';
import { OutboxMailSender, OutboxSmsSender } from '../../shared/delivery/outbox.js';
import { fakeOrigin } from '../interop/support/chromium.js';
import { discoverRelyingParty } from '../interop/support/relying-party.js';
import { CHROMIUM_PATH, ConsoleBrowser, chromiumAvailable, expectConsoleHeaders, submit } from './support/console-browser.js';
import { invitationLinkFor } from './support/invitation-mail.js';

const APP_ORIGIN = 'https://console-app.example.test';
const REDIRECT_URI = `${APP_ORIGIN}/callback`;

describe('console walk in headless Chromium', function () {
  this.timeout(120_000);
  let stack: Stack | undefined;
  let chrome: ConsoleBrowser | undefined;
  let orgId: number;
  let tenant: Tenant;
  let outbox: string;
  let admin: { userId: number; email: string; password: string | null };
  let adminPage: Page;

  before(async function () {
    requireComponent(this, 'Chromium', await chromiumAvailable(), `no executable at ${CHROMIUM_PATH}: install Debian's chromium or set CHROMIUM_PATH`);
    outbox = await mkdtemp(path.join(os.tmpdir(), 'console-outbox-'));
    stack = await startStack({ label: 'console_walk', delivery: { mail: new OutboxMailSender(outbox), sms: new OutboxSmsSender(outbox), pollIntervalMs: 200 } });
    tenant = await stack.seed.tenant();
    ({ orgId } = tenant);
    admin = await stack.seed.user(orgId, { roles: ['admin', 'self_invite'], firstName: 'Ada', lastName: 'Admin' });
    chrome = await ConsoleBrowser.launch(stack.baseUrl);
  });
  after(async () => {
    await chrome?.close();
    await stack?.stop();
    if (outbox !== undefined) await rm(outbox, { recursive: true, force: true });
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

  it('registers a public client (errors first), and the client completes an OAuth sign-in through openid-client', async () => {
    const page = adminPage;
    expectConsoleHeaders(await page.goto('/settings/clients'), '/settings/clients');
    await chrome!.check(page, 'clients-list');
    await page.getByRole('link', { name: 'Register client' }).click();
    await page.waitForURL('**/settings/clients/new');
    await chrome!.check(page, 'clients-new');
    // Nothing filled in: the error summary, the title's prefix, the field tied to its message.
    await page.getByRole('checkbox', { name: 'openid' }).uncheck();
    await page.getByRole('checkbox', { name: 'profile' }).uncheck();
    await page.getByRole('checkbox', { name: 'email' }).uncheck();
    const refused = await submit(page, 'Register client');
    expect(refused?.status()).to.equal(400);
    expect(await page.title()).to.match(/^Error: Register a client/);
    expect(await page.locator('.error-summary').isVisible()).to.equal(true);
    expect(await page.evaluate<string>("document.activeElement.className")).to.include('error-summary');
    await chrome!.check(page, 'clients-new-error');
    await page.getByLabel('Name').fill('Console App');
    await page.getByLabel('Redirect URIs', { exact: true }).fill(REDIRECT_URI);
    for (const scope of ['openid', 'email']) await page.getByRole('checkbox', { name: scope }).check();
    expect(await page.getByLabel('Name').inputValue(), 'the input is kept').to.equal('Console App');
    await submit(page, 'Register client');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).to.equal('Client registered');
    const clientId = (await page.locator('#client-id').textContent())!;
    expect(clientId).to.match(/^svc_[0-9a-f]{32}$/);
    await chrome!.check(page, 'clients-registered');
    await page.goto('/settings/clients');
    expect(await page.getByRole('cell', { name: clientId }).count()).to.equal(1);
    expect(await page.getByText('Verify your identity').count(), 'scopes are described').to.be.greaterThan(0);

    const rp = await discoverRelyingParty(stack!.baseUrl, { clientId, clientSecret: null, redirectUri: REDIRECT_URI }, 'none');
    const app = await fakeOrigin(page, APP_ORIGIN, '<!doctype html><html lang="en"><title>App</title><p>Back at the app.</p></html>');
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(rp.config, {
      redirect_uri: REDIRECT_URI,
      scope: 'openid email',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    });
    await page.goto(url.href);
    expect(new URL(page.url()).pathname, 'signed in already: the consent page').to.equal('/consent');
    await page.getByRole('button', { name: 'Allow', exact: true }).click();
    await page.waitForURL((u) => u.href.startsWith(`${REDIRECT_URI}?`));
    const tokens = await client.authorizationCodeGrant(rp.config, app.visits[0]!, { pkceCodeVerifier: verifier, expectedState: state, idTokenExpected: true });
    expect(tokens.claims()).to.deep.include({ sub: String(admin.userId), aud: clientId });
  });

  it('creates an API key that works against the org API at once, shown once; revoked, it gets 401', async () => {
    const page = adminPage;
    await page.goto('/settings/api-keys');
    await chrome!.check(page, 'api-keys-list');
    await page.getByRole('link', { name: 'Create key' }).click();
    await page.waitForURL('**/settings/api-keys/new');
    await chrome!.check(page, 'api-keys-new');
    await page.getByLabel('Name', { exact: true }).fill('Walk-through key');
    await page.getByRole('checkbox', { name: 'org:facilities:read' }).check();
    await page.getByLabel('IP allowlist (optional)').fill('127.0.0.1\n::1');
    const shown = await submit(page, 'Create key');
    expectConsoleHeaders(shown, 'the key page');
    const apiKey = await page.locator('#secret-value').inputValue();
    expect(apiKey).to.match(/^svc_sk_/);
    expect(await page.getByText('You will not see it again.').count()).to.equal(1);
    await chrome!.check(page, 'api-keys-created');
    const works = await stack!.request('GET', '/api/v1/org/facilities', { apiKey });
    expect(works.status).to.equal(200);
    // Listed without its secret.
    await page.goto('/settings/api-keys');
    expect(await page.content()).to.not.include(apiKey);
    const keyId = (await page.locator('#api-keys tbody tr').filter({ hasText: 'Walk-through key' }).locator('code').first().textContent())!;
    expect(keyId).to.match(/^key_/);
    await page.getByRole('link', { name: `Revoke key ${keyId}` }).click();
    await page.waitForURL(`**/settings/api-keys/${keyId}/revoke`);
    await chrome!.check(page, 'api-keys-revoke-confirm');
    await submit(page, 'Revoke');
    expect(await page.locator('.panel').textContent()).to.include('Key revoked.');
    expect((await stack!.request('GET', '/api/v1/org/facilities', { apiKey })).status).to.equal(401);
  });

  it('adds a facility with a time zone, suspends it, and the API refuses a pass there (409)', async () => {
    const page = adminPage;
    await page.goto('/settings/facilities');
    await chrome!.check(page, 'facilities-list');
    await page.getByRole('link', { name: 'Add facility' }).click();
    await chrome!.check(page, 'facilities-new');
    await page.getByLabel('Name').fill('Annex');
    await page.getByLabel('Time zone').selectOption('Europe/Berlin');
    await submit(page, 'Add facility');
    const row = page.locator('#facilities tbody tr').filter({ hasText: 'Annex' });
    expect(await row.getByText('Europe/Berlin').count()).to.equal(1);
    const facilityId = Number(await row.locator('td').first().textContent());
    const listed = await stack!.request('GET', '/api/v1/org/facilities', { apiKey: tenant.apiKey });
    expect(listed.body.facilities.find((f: { id: number }) => f.id === facilityId)).to.deep.include({ name: 'Annex', time_zone: 'Europe/Berlin', suspended: false });
    await row.getByRole('button', { name: 'Suspend Annex' }).click();
    await page.waitForURL('**/settings/facilities?notice=suspended');
    await chrome!.check(page, 'facilities-suspended');
    const refused = await stack!.request('POST', '/api/v1/org/passes', { apiKey: tenant.apiKey, json: passBody(facilityId) });
    expect(refused.status).to.equal(409);
    await page.locator('#facilities tbody tr').filter({ hasText: 'Annex' }).getByRole('link', { name: 'Deactivate Annex' }).click();
    await chrome!.check(page, 'facilities-deactivate-confirm');
  });

  it('invites an address; the invitee opens the emailed link, sets a password, accepts, and holds the role', async () => {
    const page = adminPage;
    await page.goto('/settings/people');
    await chrome!.check(page, 'people');
    await page.getByLabel('Email address').fill('grace@example.com');
    await page.getByLabel('Role offered').selectOption('self_invite');
    await submit(page, 'Send invitation');
    expect(await page.locator('.panel').textContent()).to.include('Invitation sent.');
    expect(await page.locator('#invitations').getByRole('rowheader', { name: 'grace@example.com' }).count()).to.equal(1);

    const link = await invitationLinkFor(outbox, 'grace@example.com');
    const invitee = await chrome!.newPage();
    expectConsoleHeaders(await invitee.goto(link), 'the join page');
    expect(await invitee.getByRole('heading', { level: 1 }).textContent()).to.match(/^Join /);
    await chrome!.check(invitee, 'join-set-password');
    await invitee.getByLabel('First name').fill('Grace');
    await invitee.getByLabel('Last name').fill('Hopper');
    await invitee.getByLabel('Password').fill('correct horse battery staple');
    await submit(invitee, 'Create account');
    expect(new URL(invitee.url()).pathname).to.equal('/invitations');
    await chrome!.check(invitee, 'invitations');
    await submit(invitee, 'Accept');
    expect(await invitee.locator('.panel').textContent()).to.include('Invitation accepted.');
    expect(await invitee.getByText('You have no pending invitations.').count()).to.equal(1);
    await chrome!.check(invitee, 'invitations-accepted');
    const user = await stack!.db(READ_MODELS.users).first('roles', 'org_id').where({ email: 'grace@example.com' });
    expect(user).to.deep.include({ roles: ['self_invite'] });
    expect(Number(user.org_id)).to.equal(orgId);
    // The link answered, it opens nothing any more.
    expect((await invitee.goto(link))?.status()).to.equal(404);
  });

  it('another invitee declines', async () => {
    const page = adminPage;
    await page.goto('/settings/people');
    await page.getByLabel('Email address').fill('linus@example.com');
    await page.getByLabel('Role offered').selectOption('');
    await submit(page, 'Send invitation');
    const link = await invitationLinkFor(outbox, 'linus@example.com');
    const inviteId = Number((await stack!.db(READ_MODELS.invitations).first('invite_id').where({ email: 'linus@example.com' })).invite_id);
    const invitee = await chrome!.newPage();
    await invitee.goto(link);
    await invitee.getByLabel('First name').fill('Linus');
    await invitee.getByLabel('Last name').fill('Torvalds');
    await invitee.getByLabel('Password').fill('another long passphrase');
    await submit(invitee, 'Create account');
    await submit(invitee, 'Decline');
    expect(await invitee.locator('.panel').textContent()).to.include('Invitation declined.');
    const pending = await stack!.db(READ_MODELS.invitations).where({ org_id: orgId });
    expect(pending.map((i: { email: string }) => i.email)).to.not.include('linus@example.com');
    // An event, naming the invitee who declined as its actor.
    const linus = await stack!.db(READ_MODELS.users).first('user_id').where({ email: 'linus@example.com' });
    const last = (await stack!.store.readStream(`invitation-${inviteId}`)).at(-1)!;
    expect(last.type).to.equal('InvitationDeclined');
    expect(last.metadata.actor).to.deep.equal({ kind: 'user', id: Number(linus.user_id) });
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
