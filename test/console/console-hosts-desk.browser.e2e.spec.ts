// The console's host, front desk and member pages walked in headless Chromium: an admin imports a
// CSV of 1,000 members and finds one by name; a host creates a pass in /passes whose email reaches
// the outbox; the front desk sees a guest move from expected to on site to left as the simulated
// door (the embedded door path: aedes, a controller simulator) scans in and out, the page keeping
// itself current; a host who is not an admin gets 403 on /settings pages. Every page is checked
// with axe-core and screenshotted at 390 x 844 and 1280 x 800 (console-browser.ts).
import os from 'node:os';
import path from 'node:path';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { requireComponent } from '../support/components.js';
import { startStack, passBody, type Stack } from '../support/stack.js';
import { OutboxMailSender, OutboxSmsSender } from '../../shared/delivery/outbox.js';
import { startDoorPath, type DoorPath } from '../../door-gateway/embedded.js';
import { CHROMIUM_PATH, ConsoleBrowser, chromiumAvailable, expectConsoleHeaders, submit } from './support/console-browser.js';

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('console hosts, front desk and members in headless Chromium', function () {
  this.timeout(180_000);
  let stack: Stack | undefined;
  let chrome: ConsoleBrowser | undefined;
  let door: DoorPath | undefined;
  let dataDir: string;
  let outbox: string;
  let orgId: number;
  let facilityId: number;
  let apiKey: string;
  let admin: { userId: number; email: string; password: string | null };
  let adminPage: Page;

  before(async function () {
    requireComponent(this, 'Chromium', await chromiumAvailable(), `no executable at ${CHROMIUM_PATH}: install Debian's chromium or set CHROMIUM_PATH`);
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'gp-console-desk-'));
    outbox = path.join(dataDir, 'outbox');
    stack = await startStack({ label: 'console_desk', delivery: { mail: new OutboxMailSender(outbox), sms: new OutboxSmsSender(outbox), pollIntervalMs: 200 } });
    ({ orgId, facilityId, apiKey } = await stack.seed.tenant());
    admin = await stack.seed.user(orgId, { roles: ['admin', 'self_invite'], firstName: 'Ada', lastName: 'Admin' });
    door = await startDoorPath(
      { store: stack.store, knex: stack.db, logger: stack.logger, config: { kafkaBrokers: [], kafkaPassTopicPartitions: 1, mqttUrl: null, dataDir } },
      { facilityPollMs: 200, recordBrokerUrl: false },
    );
    chrome = await ConsoleBrowser.launch(stack.baseUrl);
    adminPage = await chrome.newPage();
    await chrome.signIn(adminPage, admin.email, admin.password!, '/settings/members');
  });
  after(async () => {
    await chrome?.close();
    await door?.stop();
    await stack?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('an admin imports a CSV of 1,000 members, watches its progress, and finds one by name', async () => {
    const response = await adminPage.goto('/settings/members');
    expectConsoleHeaders(response, '/settings/members');
    await chrome!.check(adminPage, 'members-empty');
    await adminPage.getByRole('link', { name: 'Import from a CSV file' }).click();
    await chrome!.check(adminPage, 'members-import');
    const lines = ['first_name,last_name,email,department'];
    for (let i = 1; i <= 1000; i++) lines.push(`Person${i},Imported,person${i}@example.com,Dept ${i % 7}`);
    lines[500] = 'Broken,Row,not-an-address,Dept';
    await adminPage.getByLabel('CSV file').setInputFiles({ name: 'members.csv', mimeType: 'text/csv', buffer: Buffer.from(lines.join('\n')) });
    await submit(adminPage, 'Import members');
    expect(new URL(adminPage.url()).pathname).to.match(/^\/settings\/members\/import\/[A-Za-z0-9_-]+$/);
    // The progress region updates itself (no reload) until the import is done.
    await adminPage.getByRole('heading', { name: 'Import finished' }).waitFor({ timeout: 60_000 });
    expect(await adminPage.locator('#import-progress').textContent()).to.match(/999\s*added[\s\S]*1\s*rejected/);
    expect(await adminPage.locator('#rejected').textContent()).to.include('email');
    await chrome!.check(adminPage, 'members-import-report');

    await adminPage.goto('/settings/members');
    await adminPage.getByLabel('Search').fill('person777');
    await submit(adminPage, 'Search');
    const table = adminPage.locator('#members');
    expect(await table.textContent()).to.include('Person777 Imported');
    expect(await table.textContent()).to.include('person777@example.com');
    await chrome!.check(adminPage, 'members-search');
    await adminPage.getByRole('link', { name: 'Person777 Imported' }).click();
    await chrome!.check(adminPage, 'member');
  });

  it('a host creates a pass in /passes and its email reaches the outbox', async () => {
    const host = await stack!.seed.user(orgId, { roles: ['self_invite'], firstName: 'Hal', lastName: 'Host', inviteAllowance: 5 });
    const page = await chrome!.newPage();
    await chrome!.signIn(page, host.email, host.password!, '/passes');
    expect(new URL(page.url()).pathname).to.equal('/passes');
    await chrome!.check(page, 'passes-empty');
    await page.getByRole('link', { name: 'Create pass' }).click();
    await chrome!.check(page, 'pass-new');
    // Submitted empty: the error summary, then the input kept after a correction.
    await submit(page, 'Create pass');
    expect(await page.title()).to.match(/^Error: /);
    await chrome!.check(page, 'pass-new-errors');
    await page.getByLabel('Guest’s first name').fill('Grace');
    await page.getByLabel('Guest’s last name (optional)').fill('Guest');
    await page.getByLabel('Guest’s email address').fill('grace.guest@example.com');
    await page.getByLabel('Facility').selectOption(String(facilityId));
    await page.getByLabel('Arrival date').fill(new Date().toISOString().slice(0, 10));
    await page.getByLabel('Number of passes').fill('2');
    const response = await submit(page, 'Create pass');
    expect(response?.status()).to.equal(201);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).to.equal('2 passes created');
    expect(await page.locator('.stats').first().textContent()).to.match(/2\s*used[\s\S]*5\s*limit[\s\S]*3\s*remaining/);
    await chrome!.check(page, 'pass-created');

    let mail = '';
    await until(async () => {
      const names = await readdir(outbox).catch(() => [] as string[]);
      for (const name of names.filter((n) => n.endsWith('email.eml'))) {
        const text = await readFile(path.join(outbox, name), 'utf8');
        if (text.includes('grace.guest@example.com')) mail = text;
      }
      return mail !== '';
    }, 'the pass email in the outbox');
    expect(mail).to.match(/\/p\/[A-Za-z0-9_-]{32}/);

    await page.goto('/passes');
    expect(await page.locator('#passes').textContent()).to.include('Grace Guest');
    await until(async () => {
      await page.reload();
      return (await page.locator('#passes').textContent())!.includes('Sent');
    }, 'the list shows the email sent');
    await chrome!.check(page, 'passes-list');
    await page.getByRole('link', { name: 'Grace Guest' }).first().click();
    await chrome!.check(page, 'pass-detail');
    await page.getByRole('link', { name: 'Revoke' }).click();
    await chrome!.check(page, 'pass-revoke-confirm');
  });

  it('the front desk sees a guest move from expected to on site to left as the simulated door scans', async () => {
    const created = await stack!.request('POST', '/api/v1/org/passes', { apiKey, json: passBody(facilityId, { first_name: 'Vera', last_name: 'Visitor', arrival_date: new Date().toISOString().slice(0, 10), arrival_time: null }) });
    expect(created.status, created.text).to.equal(201);
    const qrValue = created.body.qr_value as string;
    const publicId = created.body.public_id as string;
    await until(async () => door!.controllers.get(facilityId)?.[0]?.holds(publicId) !== undefined, 'the simulated controller holds the pass');
    const controller = door!.controllers.get(facilityId)![0]!;

    await adminPage.goto(`/visitors?facility=${facilityId}`);
    expect(await adminPage.locator('#expected').textContent()).to.include('Vera Visitor');
    await chrome!.check(adminPage, 'visitors-expected');

    expect(controller.scan({ qrValue }, new Date(), 'Front door', 'entry').result).to.equal('granted');
    // No reload: the page fetches itself again every 10 seconds.
    await adminPage.locator('#on-site').filter({ hasText: 'Vera Visitor' }).waitFor({ timeout: 30_000 });
    expect(await adminPage.locator('#visitors-live').textContent()).to.not.match(/Expected[\s\S]*Vera Visitor[\s\S]*Left/);
    await chrome!.check(adminPage, 'visitors-on-site');

    await adminPage.getByRole('link', { name: 'Print the on-site list' }).click();
    expect(await adminPage.locator('#evacuation').textContent()).to.include('Vera Visitor');
    await adminPage.emulateMedia({ media: 'print' });
    expect(await adminPage.locator('nav').isVisible()).to.equal(false);
    expect(await adminPage.locator('#evacuation').isVisible()).to.equal(true);
    await adminPage.emulateMedia({ media: 'screen' });
    await chrome!.check(adminPage, 'visitors-evacuation');

    await adminPage.goto(`/visitors?facility=${facilityId}`);
    expect(controller.scan({ qrValue }, new Date(), 'Front door', 'exit').result).to.equal('granted');
    await adminPage.locator('#left').filter({ hasText: 'Vera Visitor' }).waitFor({ timeout: 30_000 });
    expect((await adminPage.locator('#on-site').count()) === 0 || !(await adminPage.locator('#on-site').textContent())!.includes('Vera Visitor')).to.equal(true);
    await chrome!.check(adminPage, 'visitors-left');
  });

  it('a host who is not an admin gets the 403 page on /settings pages and /visitors', async () => {
    const host = await stack!.seed.user(orgId, { roles: ['self_invite'] });
    const page = await chrome!.newPage();
    await chrome!.signIn(page, host.email, host.password!, '/passes');
    for (const target of ['/settings/members', '/settings/audit', '/visitors']) {
      const response = await page.goto(target);
      expect(response?.status(), target).to.equal(403);
      expectConsoleHeaders(response, `${target} 403`);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).to.equal('You do not have access to this page');
    }
    await chrome!.check(page, 'members-403');
  });

  it('the audit log lists what the walk did', async () => {
    await adminPage.goto('/settings/audit');
    const text = await adminPage.locator('#audit').textContent();
    expect(text).to.include('Member joined');
    expect(text).to.include('Pass checked in');
    await chrome!.check(adminPage, 'audit');
  });
});
