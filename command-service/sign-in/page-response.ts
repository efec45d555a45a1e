// How the sign-in pages answer: HTML that is never cached (it carries CSRF tokens, recovery codes,
// a TOTP secret, who is signed in), never framed (clickjacking of Allow and Sign in), and runs no
// script but our own files.
//
// No `form-action` in the policy: a form here legitimately ends at the client's redirect_uri
// (Allow, Sign in) or at the upstream provider (federated sign-in) after redirects, and browsers
// apply form-action to every hop of a form's redirect chain.
import type { HttpContext } from '../../shared/http/http-state.js';
import type { SafeHtml } from '../../shared/sign-in/html.js';

export const PAGE_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

function pageHeaders(ctx: HttpContext): void {
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Content-Security-Policy', PAGE_CONTENT_SECURITY_POLICY);
  ctx.set('X-Frame-Options', 'DENY');
}

export function sendPage(ctx: HttpContext, page: SafeHtml, status = 200): void {
  pageHeaders(ctx);
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = page.value;
}

/** 302 to `location`. The Location may carry a code or state: never cached either. */
export function redirectTo(ctx: HttpContext, location: string): void {
  ctx.set('Cache-Control', 'no-store');
  ctx.status = 302;
  ctx.set('Location', location);
  ctx.body = '';
}

/**
 * Sends the browser on: 302 for a navigation, or 200 `{"location": ...}` for a script that asked
 * for JSON (a fetch cannot read a redirect's Location, nor follow it to another origin).
 */
export function sendOn(ctx: HttpContext, location: string): void {
  if (ctx.accepts('html', 'json') === 'json') {
    ctx.set('Cache-Control', 'no-store');
    ctx.status = 200;
    ctx.body = { location };
    return;
  }
  redirectTo(ctx, location);
}
