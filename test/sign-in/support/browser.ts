// A headless browser for the sign-in pages: a cookie jar that stores what Set-Cookie says and
// sends it back, requests that never follow redirects (each hop is looked at), and helpers to
// read the pages' CSRF tokens and forms. Reused by other suites to drive a sign-in (see
// sign-in-driver.ts).

export interface SetCookie {
  readonly name: string;
  readonly value: string;
  /** Attribute names lower-cased; flags (HttpOnly, Secure) map to true. */
  readonly attributes: Readonly<Record<string, string | true>>;
}

/** One Set-Cookie header value (RFC 6265 §5.2, enough of it for our own cookies). */
export function parseSetCookie(header: string): SetCookie {
  const [pair = '', ...rest] = header.split(';');
  const eq = pair.indexOf('=');
  const name = (eq < 0 ? pair : pair.slice(0, eq)).trim();
  const value = eq < 0 ? '' : pair.slice(eq + 1).trim();
  const attributes: Record<string, string | true> = {};
  for (const part of rest) {
    const i = part.indexOf('=');
    const key = (i < 0 ? part : part.slice(0, i)).trim().toLowerCase();
    if (key !== '') attributes[key] = i < 0 ? true : part.slice(i + 1).trim();
  }
  return { name, value, attributes };
}

/** The cookies of one origin (path and domain are always / and host-only for ours). */
export class CookieJar {
  private readonly cookies = new Map<string, string>();

  /** Applies every Set-Cookie of a response, in order: Max-Age=0 (or an empty value) deletes. */
  store(headers: Headers): SetCookie[] {
    const set = headers.getSetCookie().map(parseSetCookie);
    for (const cookie of set) {
      const maxAge = cookie.attributes['max-age'];
      if (cookie.value === '' || (typeof maxAge === 'string' && Number(maxAge) <= 0)) this.cookies.delete(cookie.name);
      else this.cookies.set(cookie.name, cookie.value);
    }
    return set;
  }

  /** A cookie by name, with or without its `__Host-` prefix. */
  get(name: string): string | undefined {
    return this.cookies.get(name) ?? this.cookies.get(`__Host-${name}`);
  }

  set(name: string, value: string): void {
    this.cookies.set(name, value);
  }

  delete(name: string): void {
    this.cookies.delete(name);
    this.cookies.delete(`__Host-${name}`);
  }

  names(): string[] {
    return [...this.cookies.keys()];
  }

  /** The Cookie request header, or null when the jar is empty. */
  header(): string | null {
    if (this.cookies.size === 0) return null;
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

export interface BrowserResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The Location header, or null. */
  readonly location: string | null;
  /** The Set-Cookie headers of this response, parsed. */
  readonly setCookies: readonly SetCookie[];
}

export interface BrowserRequestOptions {
  readonly headers?: Record<string, string>;
  /** Sent as application/x-www-form-urlencoded. */
  readonly form?: Record<string, string>;
  /** Sent as is (set Content-Type in `headers`). */
  readonly body?: string;
}

export class Browser {
  readonly jar = new CookieJar();

  constructor(readonly baseUrl: string) {}

  async request(method: string, path: string, options: BrowserRequestOptions = {}): Promise<BrowserResponse> {
    const headers: Record<string, string> = { Accept: 'text/html', ...options.headers };
    const cookie = this.jar.header();
    if (cookie !== null) headers.Cookie = cookie;
    let body = options.body;
    if (options.form !== undefined) {
      body = new URLSearchParams(options.form).toString();
      headers['Content-Type'] ??= 'application/x-www-form-urlencoded';
    }
    const url = /^https?:\/\//.test(path) ? path : this.baseUrl + path;
    const res = await fetch(url, { method, headers, body, redirect: 'manual' });
    const text = await res.text();
    const setCookies = this.jar.store(res.headers);
    return { status: res.status, headers: res.headers, text, location: res.headers.get('location'), setCookies };
  }

  get(path: string, options: Omit<BrowserRequestOptions, 'form' | 'body'> = {}): Promise<BrowserResponse> {
    return this.request('GET', path, options);
  }

  post(path: string, form: Record<string, string>, options: Omit<BrowserRequestOptions, 'form'> = {}): Promise<BrowserResponse> {
    return this.request('POST', path, { ...options, form });
  }
}

function decodeEntities(text: string): string {
  return text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&#96;/g, '`')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** The value of the first `<input name="{name}" ... value="...">` of a page. */
export function inputValue(html: string, name: string): string | null {
  for (const m of html.matchAll(/<input\b[^>]*>/g)) {
    const tag = m[0];
    if (!new RegExp(`\\bname="${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"`).test(tag)) continue;
    const value = /\bvalue="([^"]*)"/.exec(tag);
    return value ? decodeEntities(value[1]!) : '';
  }
  return null;
}

/** The page's CSRF token (its forms' `csrf` field, else `<meta name="csrf-token">`). */
export function csrfTokenOf(html: string): string {
  const field = inputValue(html, 'csrf');
  if (field !== null) return field;
  const meta = /<meta name="csrf-token" content="([^"]*)">/.exec(html);
  if (!meta) throw new Error('the page has no CSRF token');
  return decodeEntities(meta[1]!);
}
