// The sign-in suites' headless browser (../../support/browser.ts) with what the passkey script
// sends: JSON posts with the CSRF header, and forms; answers are asked for as JSON, and parsed.
import { Browser, type BrowserResponse } from '../../support/browser.js';

export interface JsonResponse extends BrowserResponse {
  readonly json: any;
}

function withJson(res: BrowserResponse): JsonResponse {
  const isJson = (res.headers.get('content-type') ?? '').includes('json');
  return { ...res, json: isJson && res.text !== '' ? JSON.parse(res.text) : undefined };
}

export class TestBrowser extends Browser {
  /** Sets a cookie from `name=value`. */
  setCookie(pair: string): void {
    const eq = pair.indexOf('=');
    this.jar.set(pair.slice(0, eq), pair.slice(eq + 1));
  }

  /** Another browser holding a copy of this one's cookies as they are now (to replay them later). */
  snapshot(): TestBrowser {
    const copy = new TestBrowser(this.baseUrl);
    for (const name of this.jar.names()) copy.jar.set(name, this.jar.get(name)!);
    return copy;
  }

  async getJson(path: string, headers: Record<string, string> = {}): Promise<JsonResponse> {
    return withJson(await this.get(path, { headers }));
  }

  async postJson(path: string, body: unknown, headers: Record<string, string> = {}): Promise<JsonResponse> {
    return withJson(
      await this.request('POST', path, { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json', Accept: 'application/json', ...headers } }),
    );
  }

  async postForm(path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<JsonResponse> {
    return withJson(await this.post(path, fields, { headers: { Accept: 'application/json', ...headers } }));
  }
}

export type { JsonResponse as BrowserResponse };
