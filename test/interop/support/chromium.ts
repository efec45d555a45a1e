// Headless Chromium for the browser tests (playwright-core drives the system's Chromium; no
// browser is downloaded), and the page checks those tests share.
import { constants } from 'node:fs';
import { access, mkdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';

/** CHROMIUM_PATH, else Debian's chromium. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH?.trim() || '/usr/bin/chromium';

export async function chromiumAvailable(executable = CHROMIUM_PATH): Promise<boolean> {
  try {
    await access(executable, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** test-artifacts/ at the repository root (git-ignored), created on demand. */
export const ARTIFACTS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test-artifacts');

/**
 * A screenshot path under test-artifacts/; any file left there by an earlier run is removed first,
 * so "the file exists" can only be this run's doing.
 */
export async function freshArtifact(name: string): Promise<string> {
  await mkdir(ARTIFACTS_DIR, { recursive: true });
  const file = path.join(ARTIFACTS_DIR, name);
  await rm(file, { force: true });
  return file;
}

export async function fileSize(file: string): Promise<number> {
  return (await stat(file)).size;
}

export interface FormControlReport {
  /** Visible form controls checked (not hidden inputs, not buttons). */
  readonly checked: number;
  /** Those without an accessible label: `<label for>`, a wrapping label, aria-label or aria-labelledby. */
  readonly unlabelled: string[];
}

// Runs in the page. A string, not a function: tsx (esbuild keepNames) would wrap the function's
// inner helpers in a `__name` call that does not exist in the page.
const FORM_CONTROL_LABELS = `(() => {
  const controls = [...document.querySelectorAll('input, select, textarea')].filter(
    (el) => !(el instanceof HTMLInputElement && ['hidden', 'submit', 'button', 'reset', 'image'].includes(el.type)),
  );
  const hasText = (node) => node !== null && (node.textContent || '').trim() !== '';
  const labelled = (el) =>
    [...(el.labels || [])].some(hasText) ||
    (el.getAttribute('aria-label') || '').trim() !== '' ||
    (el.getAttribute('aria-labelledby') || '').split(/\\s+/).some((id) => id !== '' && hasText(document.getElementById(id)));
  return { checked: controls.length, unlabelled: controls.filter((el) => !labelled(el)).map((el) => el.outerHTML) };
})()`;

/** The page's form controls that lack a label (WCAG 1.3.1 / 4.1.2). */
export function formControlLabels(page: Page): Promise<FormControlReport> {
  return page.evaluate<FormControlReport>(FORM_CONTROL_LABELS);
}

/** The `lang` attribute of the page's root element ('' when absent). */
export function documentLanguage(page: Page): Promise<string> {
  return page.locator('html').getAttribute('lang').then((lang) => lang ?? '');
}

export interface FakeOrigin {
  /** The documents the browser navigated to on that origin, in order. */
  readonly visits: URL[];
  /** Failures of the interception itself (the page closed mid-request, ...). */
  readonly errors: unknown[];
}

/**
 * Answers every request of `origin` in this page with `html` (documents) or a 404 (anything else),
 * so a client's redirect URI needs no server. Through Chromium's Fetch domain rather than
 * page.route: Playwright never routes a request that is the target of a redirect ("the handler
 * will only be called for the first url if the response is a redirect"), and the authorization
 * server reaches the client only by redirects; Chromium then tries the network and fails with
 * ERR_NAME_NOT_RESOLVED.
 */
export async function fakeOrigin(page: Page, origin: string, html: string): Promise<FakeOrigin> {
  const visits: URL[] = [];
  const errors: unknown[] = [];
  const cdp = await page.context().newCDPSession(page);
  cdp.on('Fetch.requestPaused', (event) => {
    const document = event.resourceType === 'Document';
    if (document) visits.push(new URL(event.request.url));
    cdp
      .send('Fetch.fulfillRequest', {
        requestId: event.requestId,
        responseCode: document ? 200 : 404,
        responseHeaders: [{ name: 'Content-Type', value: 'text/html; charset=utf-8' }],
        body: Buffer.from(document ? html : '').toString('base64'),
      })
      .catch((error: unknown) => errors.push(error));
  });
  await cdp.send('Fetch.enable', { patterns: [{ urlPattern: `${origin}/*`, requestStage: 'Request' }] });
  return { visits, errors };
}
