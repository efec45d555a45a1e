// Reading and writing the sign-in cookies on a request (browser-cookies.ts says which and why).
// One Set-Cookie per cookie name and response: writing a cookie again replaces the header
// written earlier in the same request, so the browser never sees two contradictory values.
import type { HttpContext } from '../../shared/http/http-state.js';
import { clearCookieHeader, cookieName, setCookieHeader, type CookieSpec } from '../../shared/sign-in/browser-cookies.js';
import { openCookieValue, sealCookieValue } from '../../shared/sign-in/sealed-cookie.js';

export class BrowserState {
  constructor(
    private readonly httpsIssuer: boolean,
    private readonly cookieKey: Buffer,
  ) {}

  get(ctx: HttpContext, spec: CookieSpec): string | undefined {
    return ctx.cookies.get(cookieName(spec, this.httpsIssuer)) || undefined;
  }

  set(ctx: HttpContext, spec: CookieSpec, value: string): void {
    this.replace(ctx, spec, setCookieHeader(spec, value, this.httpsIssuer));
  }

  clear(ctx: HttpContext, spec: CookieSpec): void {
    // Only clear what the browser sent (or what this response set): no noise on every page.
    const name = cookieName(spec, this.httpsIssuer);
    if (this.get(ctx, spec) === undefined && !this.written(ctx).some((h) => h.startsWith(`${name}=`))) return;
    this.replace(ctx, spec, clearCookieHeader(spec, this.httpsIssuer));
  }

  /** The sealed value if present, intact, unexpired and of the expected shape; else null. */
  getSealed<T>(ctx: HttpContext, spec: CookieSpec, isValid: (value: unknown) => value is T, now = new Date()): T | null {
    const value = openCookieValue<unknown>(this.cookieKey, spec.name, this.get(ctx, spec), now);
    return isValid(value) ? value : null;
  }

  setSealed(ctx: HttpContext, spec: CookieSpec, value: unknown, now = new Date()): void {
    const expiresAt = new Date(now.getTime() + spec.maxAgeSeconds * 1000);
    this.set(ctx, spec, sealCookieValue(this.cookieKey, spec.name, value, expiresAt));
  }

  private written(ctx: HttpContext): string[] {
    const current = ctx.response.get('Set-Cookie') as string | string[] | undefined;
    return current === undefined || current === '' ? [] : Array.isArray(current) ? current : [current];
  }

  private replace(ctx: HttpContext, spec: CookieSpec, header: string): void {
    const name = cookieName(spec, this.httpsIssuer);
    const others = this.written(ctx).filter((h) => !h.startsWith(`${name}=`));
    ctx.set('Set-Cookie', [...others, header]);
  }
}
