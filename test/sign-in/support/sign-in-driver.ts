// Drives the whole browser side of an authorization headlessly: authorize, sign-in page (and the
// second factor when a TOTP secret is given), consent page, back to authorize, and returns the
// code the client receives. Every hop is checked as it goes, so a failure says where it stopped.
//
//   const code = await signInAndAuthorize(stack, { email, password, clientId, redirectUri,
//     scope: 'openid profile', codeChallenge, state: 's', nonce: 'n' });
import { generate } from 'otplib';
import { Browser, csrfTokenOf, inputValue, type BrowserResponse } from './browser.js';

export interface AuthorizeOptions {
  readonly clientId: string;
  readonly redirectUri: string;
  readonly scope?: string;
  readonly codeChallenge: string;
  readonly state?: string;
  readonly nonce?: string;
  readonly prompt?: string;
  readonly maxAge?: number;
  /** Any other parameters, added as given. */
  readonly extra?: Record<string, string>;
}

export interface SignInAndAuthorizeOptions extends AuthorizeOptions {
  readonly email: string;
  readonly password: string;
  /** The user's TOTP secret (Base32), when the user has enrolled an authenticator app. */
  readonly totpSecret?: string;
  /** Reuse a browser (its cookies: session, CSRF); a fresh one by default. */
  readonly browser?: Browser;
  /** Allow (default) or deny on the consent page, if it is shown. */
  readonly consent?: 'allow' | 'deny';
}

export interface AuthorizationResult {
  readonly code: string;
  /** The redirect the client received, parsed. */
  readonly callback: URL;
  readonly browser: Browser;
  /** Every hop, in order, for assertions on the path taken. */
  readonly hops: readonly string[];
}

export function authorizePath(options: AuthorizeOptions): string {
  const params = new URLSearchParams({
    response_type: 'code',
    client_id: options.clientId,
    redirect_uri: options.redirectUri,
    code_challenge: options.codeChallenge,
    code_challenge_method: 'S256',
  });
  if (options.scope !== undefined) params.set('scope', options.scope);
  if (options.state !== undefined) params.set('state', options.state);
  if (options.nonce !== undefined) params.set('nonce', options.nonce);
  if (options.prompt !== undefined) params.set('prompt', options.prompt);
  if (options.maxAge !== undefined) params.set('max_age', String(options.maxAge));
  for (const [name, value] of Object.entries(options.extra ?? {})) params.set(name, value);
  return `/api/oauth/authorize?${params.toString()}`;
}

/**
 * TOTP codes of the previous, current and next time step: the service accepts each within its
 * window, once per step and only after the last step it accepted for the user, so trying them in
 * this order gets the earliest usable one.
 */
export async function totpCandidates(secret: string, now = new Date()): Promise<string[]> {
  const epoch = Math.floor(now.getTime() / 1000);
  return Promise.all([epoch - 30, epoch, epoch + 30].map((e) => generate({ secret, epoch: e })));
}

function expectRedirect(res: BrowserResponse, where: string): string {
  if (res.status !== 302 || res.location === null) {
    throw new Error(`${where}: expected a 302, got ${res.status}: ${res.text.slice(0, 300)}`);
  }
  return res.location;
}

/** Signs in on the sign-in page; returns where the service sends the browser next. */
export async function submitPassword(browser: Browser, email: string, password: string): Promise<string> {
  const page = await browser.get('/signin');
  if (page.status !== 200) throw new Error(`GET /signin: expected 200, got ${page.status}`);
  const res = await browser.post('/signin', { csrf: csrfTokenOf(page.text), email, password });
  return expectRedirect(res, 'POST /signin');
}

/** Passes the second factor with the first TOTP code the service accepts. */
export async function submitTotp(browser: Browser, secret: string): Promise<string> {
  const page = await browser.get('/signin/second-factor');
  if (page.status !== 200) throw new Error(`GET /signin/second-factor: expected 200, got ${page.status}`);
  const csrf = csrfTokenOf(page.text);
  for (const code of await totpCandidates(secret)) {
    const res = await browser.post('/signin/second-factor', { csrf, code });
    if (res.status === 302 && res.location !== null) return res.location;
  }
  throw new Error('POST /signin/second-factor: no TOTP code of the current window was accepted');
}

export async function submitConsent(browser: Browser, decision: 'allow' | 'deny' = 'allow'): Promise<string> {
  const page = await browser.get('/consent');
  if (page.status !== 200) throw new Error(`GET /consent: expected 200, got ${page.status}: ${page.text.slice(0, 300)}`);
  const res = await browser.post('/consent', { csrf: csrfTokenOf(page.text), request: inputValue(page.text, 'request') ?? '', decision });
  return expectRedirect(res, 'POST /consent');
}

/** The whole flow; resolves with the code, the client's callback and the browser (signed in). */
export async function authorizeInBrowser(target: { readonly baseUrl: string } | string, options: SignInAndAuthorizeOptions): Promise<AuthorizationResult> {
  const baseUrl = typeof target === 'string' ? target : target.baseUrl;
  const browser = options.browser ?? new Browser(baseUrl);
  const hops: string[] = [];
  let location = authorizePath(options);
  for (let step = 0; step < 12; step++) {
    hops.push(location);
    if (location.startsWith(options.redirectUri)) {
      const callback = new URL(location);
      const code = callback.searchParams.get('code');
      if (code === null) throw new Error(`the client received no code: ${location}`);
      return { code, callback, browser, hops };
    }
    const path = location.startsWith(baseUrl) ? location.slice(baseUrl.length) : location;
    if (path === '/signin') location = await submitPassword(browser, options.email, options.password);
    else if (path === '/signin/second-factor') {
      if (options.totpSecret === undefined) throw new Error('the service asks for a second factor: pass totpSecret');
      location = await submitTotp(browser, options.totpSecret);
    } else if (path === '/consent') location = await submitConsent(browser, options.consent ?? 'allow');
    else if (path.startsWith('/api/oauth/authorize?')) location = expectRedirect(await browser.get(path), `GET ${path.slice(0, 40)}...`);
    else throw new Error(`unexpected stop on the way: ${location}`);
  }
  throw new Error(`too many hops: ${hops.join(' -> ')}`);
}

/** The code the client receives at the end of a whole browser sign-in and authorization. */
export async function signInAndAuthorize(target: { readonly baseUrl: string } | string, options: SignInAndAuthorizeOptions): Promise<string> {
  return (await authorizeInBrowser(target, options)).code;
}
