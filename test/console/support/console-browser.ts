// Headless Chromium for the console's browser tests (playwright-core over the system's Chromium,
// as the sign-in and pass page tests): signing in through the real /signin page, and the check
// every page of a walk gets: axe-core run in the page (no serious or critical violation of WCAG
// 2.0/2.1/2.2 A and AA), no content-security-policy refusal, and a full-page screenshot at a phone
// (390 x 844) and a desktop (1280 x 800) size under test-artifacts/console/.
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { chromium, type Browser, type BrowserContext, type Page, type Response } from 'playwright-core';
import { ARTIFACTS_DIR, CHROMIUM_PATH, chromiumAvailable } from '../../interop/support/chromium.js';

export const CONSOLE_SHOTS_DIR = path.join(ARTIFACTS_DIR, 'console');

export const VIEWPORTS = [
  { name: 'phone', width: 390, height: 844 },
  { name: 'desktop', width: 1280, height: 800 },
] as const;

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

// Runs in the page; a string (not a function), as chromium.ts explains. Evaluated through the
// DevTools protocol, which the page's content security policy does not govern.
const RUN_AXE = `axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'] }, resultTypes: ['violations'] })
  .then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')) })))`;

export interface AxeViolation {
  readonly id: string;
  readonly impact: string | null;
  readonly help: string;
  readonly nodes: readonly string[];
}

export { chromiumAvailable, CHROMIUM_PATH };

export class ConsoleBrowser {
  private readonly contexts: BrowserContext[] = [];
  /** Content-security-policy refusals seen in any page, with the page's URL. */
  readonly policyViolations: string[] = [];
  /** Pages checked, by name (a name is used once: its screenshots would overwrite). */
  readonly checked = new Set<string>();

  private constructor(
    private readonly browser: Browser,
    readonly baseUrl: string,
  ) {}

  static async launch(baseUrl: string): Promise<ConsoleBrowser> {
    await mkdir(CONSOLE_SHOTS_DIR, { recursive: true });
    // Tests run as root, where Chromium's sandbox cannot start.
    const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ['--no-sandbox'] });
    return new ConsoleBrowser(browser, baseUrl);
  }

  /** A new browser (its own cookies), desktop-sized; `javaScriptEnabled: false` proves a page needs no script. */
  async newPage(options: { javaScriptEnabled?: boolean } = {}): Promise<Page> {
    const context = await this.browser.newContext({
      baseURL: this.baseUrl,
      viewport: { width: 1280, height: 800 },
      locale: 'en-GB',
      javaScriptEnabled: options.javaScriptEnabled ?? true,
    });
    this.contexts.push(context);
    const page = await context.newPage();
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) this.policyViolations.push(`${page.url()}: ${m.text()}`);
    });
    return page;
  }

  /**
   * Signs in through /signin (starting at `start`, which sends a browser that is not signed in
   * there and back after), and returns the response of the page it lands on.
   */
  async signIn(page: Page, email: string, password: string, start = '/invitations'): Promise<void> {
    await page.goto(start);
    expect(new URL(page.url()).pathname, `${start} sends a browser that is not signed in to /signin`).to.equal('/signin');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await Promise.all([page.waitForURL((url) => url.pathname !== '/signin'), page.getByRole('button', { name: 'Sign in', exact: true }).click()]);
  }

  /**
   * The check of every page of a walk: axe at both sizes (no serious or critical violation), a
   * screenshot at both, no content-security-policy refusal. Leaves the page at desktop size.
   */
  async check(page: Page, name: string): Promise<void> {
    expect(this.checked.has(name), `page name ${name} used twice`).to.equal(false);
    this.checked.add(name);
    for (const viewport of VIEWPORTS) {
      await page.setViewportSize({ width: viewport.width, height: viewport.height });
      const violations = await axeViolations(page);
      const severe = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      expect(severe, `axe on ${name} at ${viewport.width} px: ${JSON.stringify(severe, null, 1)}`).to.deep.equal([]);
      // Nothing wider than the screen (a table scrolls in its own container).
      const overflow = await page.evaluate<number>('document.documentElement.scrollWidth');
      expect(overflow, `${name} at ${viewport.width} px scrolls sideways`).to.be.at.most(viewport.width);
      await page.screenshot({ path: path.join(CONSOLE_SHOTS_DIR, `${name}-${viewport.width}x${viewport.height}.png`), fullPage: true });
    }
    expect(this.policyViolations, 'content security policy refusals').to.deep.equal([]);
  }

  async close(): Promise<void> {
    for (const context of this.contexts) await context.close().catch(() => undefined);
    await this.browser.close();
  }
}

export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate<boolean>("typeof window.axe === 'object'"))) await page.evaluate(AXE_SOURCE);
  return page.evaluate<AxeViolation[]>(RUN_AXE);
}

/** The headers every console page carries. */
export function expectConsoleHeaders(response: Response | null, what: string): void {
  expect(response, what).to.not.equal(null);
  const headers = response!.headers();
  expect(headers['cache-control'], `${what}: Cache-Control`).to.equal('no-store');
  expect(headers['content-security-policy'], `${what}: CSP`).to.include("frame-ancestors 'none'");
  expect(headers['content-security-policy'], `${what}: CSP`).to.include("script-src 'self'");
}

/** Clicks the button named `name` (submitting its form) and returns the response of the page it leads to. */
export async function submit(page: Page, name: string): Promise<Response | null> {
  const [response] = await Promise.all([page.waitForNavigation(), page.getByRole('button', { name, exact: true }).click()]);
  return response;
}
