// The pass page in a real browser (headless Chromium through playwright-core): what the HTML
// tests cannot show is that the QR codes a phone displays scan back to the values the 201 gave,
// in order; that the inline stylesheet passes the content security policy; that the page holds at
// 320 px; and that the confirm form works with no script. Screenshots go to test-artifacts/pass-page/.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'chai';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import jsQRModule from 'jsqr';
import { PNG } from 'pngjs';
import { requireComponent } from '../support/components.js';
import { startStack, type Stack, type Tenant } from '../support/stack.js';
import { ARTIFACTS_DIR, CHROMIUM_PATH, chromiumAvailable, documentLanguage, formControlLabels } from '../interop/support/chromium.js';
import { createBatch, type CreatedBatch } from './support/pass-batch-fixtures.js';

const SHOTS_DIR = path.join(ARTIFACTS_DIR, 'pass-page');

// jsqr is CommonJS with an ES `default`: the function itself or under `default`, by loader.
type JsQR = typeof jsQRModule.default;
const jsQR: JsQR = typeof jsQRModule === 'function' ? (jsQRModule as JsQR) : jsQRModule.default;

/** The value a PNG of one QR code scans to, or null when it does not scan. */
function scan(png: Buffer): string | null {
  const image = PNG.sync.read(png);
  return jsQR(new Uint8ClampedArray(image.data.buffer, image.data.byteOffset, image.data.length), image.width, image.height)?.data ?? null;
}

/** Screenshots each QR image of the page (kept under test-artifacts/pass-page/) and scans it. */
async function scanAll(page: Page, prefix: string): Promise<Array<string | null>> {
  const images = page.locator('svg.qr');
  const values: Array<string | null> = [];
  for (let i = 0; i < (await images.count()); i++) {
    const png = await images.nth(i).screenshot();
    await writeFile(path.join(SHOTS_DIR, `${prefix}-qr-${i + 1}.png`), png);
    values.push(scan(png));
  }
  return values;
}

describe('pass page in headless Chromium', function () {
  this.timeout(60_000);
  let stack: Stack | undefined;
  let browser: Browser | undefined;
  let tenant: Tenant;
  let batch: CreatedBatch;
  const contexts: BrowserContext[] = [];
  const policyViolations: string[] = [];
  /** The guest's phone: the page stays open across a revocation and is reloaded. */
  let phone: Page;

  before(async function () {
    requireComponent(this, 'Chromium', await chromiumAvailable(), `no executable at ${CHROMIUM_PATH}: install Debian's chromium or set CHROMIUM_PATH`);
    await mkdir(SHOTS_DIR, { recursive: true });
    stack = await startStack({ label: 'pass_page_chromium' });
    tenant = await stack.seed.tenant();
    batch = await createBatch(stack, tenant, { first_name: 'Grace', invited_by: 'Ada from Reception' });
    // Tests run as root, where Chromium's sandbox cannot start.
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ['--no-sandbox'] });
  });
  after(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    await browser?.close();
    await stack?.stop();
  });

  async function openPage(width: number, height: number): Promise<Page> {
    const context = await browser!.newContext({ baseURL: stack!.baseUrl, viewport: { width, height }, locale: 'en-GB', javaScriptEnabled: false });
    contexts.push(context);
    const page = await context.newPage();
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) policyViolations.push(m.text());
    });
    return page;
  }

  it('shows three QR codes on a phone that scan back to the 201\'s qr_values, in order', async () => {
    const page = (phone = await openPage(390, 844));
    const res = await page.goto(batch.path);
    expect(res?.status()).to.equal(200);
    expect(await documentLanguage(page)).to.equal('en');
    expect(await page.getByRole('heading', { level: 1 }).count()).to.equal(1);
    for (const n of [1, 2, 3]) {
      expect(await page.getByRole('img', { name: `QR code of pass ${n} of 3` }).count()).to.equal(1);
      expect(await page.getByRole('heading', { name: `Pass ${n} of 3` }).isVisible()).to.equal(true);
    }
    // The inline stylesheet applied (its hash is in the policy) and nothing was refused.
    expect(await page.evaluate<string>("getComputedStyle(document.querySelector('header')).backgroundColor")).to.equal('rgb(31, 58, 95)');
    await page.screenshot({ path: path.join(SHOTS_DIR, 'page-390.png'), fullPage: true });
    expect(await scanAll(page, 'initial')).to.deep.equal([...batch.qrValues]);
    expect(policyViolations).to.deep.equal([]);
  });

  it('after a revocation, shows that pass as revoked without a QR code; the others still scan', async () => {
    const del = await stack!.request('DELETE', `/api/v1/org/passes/${batch.publicIds[1]}`, { apiKey: tenant.apiKey });
    expect(del.status).to.equal(200);
    const page = phone;
    expect((await page.reload())?.status()).to.equal(200);
    const second = page.locator('li.pass').nth(1);
    expect(await second.getByText('Revoked', { exact: true }).isVisible()).to.equal(true);
    expect(await second.locator('svg').count()).to.equal(0);
    expect(await page.getByRole('img', { name: 'QR code of pass 2 of 3' }).count()).to.equal(0);
    await page.screenshot({ path: path.join(SHOTS_DIR, 'page-revoked-390.png'), fullPage: true });
    expect(await scanAll(page, 'revoked')).to.deep.equal([batch.qrValues[0], batch.qrValues[2]]);
  });

  it('holds at 320 px: each QR code at least 240 CSS px wide, no sideways scrolling', async () => {
    const page = await openPage(320, 640);
    await page.goto(batch.path);
    const images = page.locator('svg.qr');
    expect(await images.count()).to.equal(2);
    for (let i = 0; i < 2; i++) {
      const box = await images.nth(i).boundingBox();
      expect(box!.width, `QR ${i + 1} width`).to.be.at.least(240);
      expect(Math.abs(box!.width - box!.height)).to.be.lessThan(1);
    }
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).to.be.at.most(320);
    await page.screenshot({ path: path.join(SHOTS_DIR, 'page-320.png'), fullPage: true });
    expect(await scanAll(page, 'narrow')).to.deep.equal([batch.qrValues[0], batch.qrValues[2]]);
  });

  it('confirms the visit through the form, with no script: back on the page, "Visit confirmed"', async () => {
    const page = await openPage(390, 844);
    await page.goto(batch.path);
    const labels = await formControlLabels(page);
    expect(labels.unlabelled).to.deep.equal([]);
    expect(labels.checked).to.equal(2);
    await page.getByLabel('Name as on your ID').fill('Grace Brewster Hopper');
    await page.getByLabel('Vehicle number (optional)').fill('B-GH 1906');
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === `${batch.path}/register`),
      page.getByRole('button', { name: 'Confirm visit' }).click(),
    ]);
    expect(response.status()).to.equal(303);
    await page.waitForURL((url) => url.pathname === batch.path);
    expect(await page.getByRole('heading', { name: 'Visit confirmed' }).isVisible()).to.equal(true);
    expect(await page.locator('form').count()).to.equal(0);
    await page.screenshot({ path: path.join(SHOTS_DIR, 'page-confirmed-390.png'), fullPage: true });
    const list = await stack!.request('GET', '/api/v1/org/passes?limit=100', { apiKey: tenant.apiKey });
    const statuses = new Map(list.body.items.map((p: { public_id: string; status: string }) => [p.public_id, p.status]));
    expect(batch.publicIds.map((id) => statuses.get(id))).to.deep.equal(['registered', 'cancelled', 'registered']);
    expect(policyViolations).to.deep.equal([]);
  });
});
