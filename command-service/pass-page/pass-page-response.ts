// How the pass page answers. Every answer of its routes, errors and downloads included, carries a
// bearer link's worth of care: never stored by a cache, never framed, never indexed, never sent
// on as a Referer, no script, and the one inline stylesheet allowed by hash.
import type { HttpContext } from '../../shared/http/http-state.js';
import type { SafeHtml } from '../../shared/sign-in/html.js';
import { PASS_PAGE_CONTENT_SECURITY_POLICY } from './pass-page-view.js';
import { PASS_CALENDAR_FILENAME } from './pass-calendar.js';

export function passPageHeaders(ctx: HttpContext): void {
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Content-Security-Policy', PASS_PAGE_CONTENT_SECURITY_POLICY);
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('X-Robots-Tag', 'noindex, nofollow');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('X-Frame-Options', 'DENY');
}

export function sendPassPage(ctx: HttpContext, page: SafeHtml, status = 200): void {
  passPageHeaders(ctx);
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = page.value;
}

export function sendCalendar(ctx: HttpContext, ics: string): void {
  passPageHeaders(ctx);
  ctx.status = 200;
  ctx.type = 'text/calendar; charset=utf-8';
  ctx.set('Content-Disposition', `attachment; filename="${PASS_CALENDAR_FILENAME}"`);
  ctx.body = ics;
}

/** 303: after a form post, the browser GETs `location` (a reload does not post again). */
export function seeOther(ctx: HttpContext, location: string): void {
  passPageHeaders(ctx);
  ctx.status = 303;
  ctx.set('Location', location);
  ctx.body = '';
}
