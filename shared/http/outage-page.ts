// The page a browser gets while a part the service stands on is down (the sign-in pages, the
// console, any page whose error reaches the error middleware): 503, Retry-After, never cached.
// Self-contained: no stylesheet, script or image to fetch from a service that is struggling.
import { html } from '../sign-in/html.js';
import type { HttpContext } from './http-state.js';

const PAGE_POLICY = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** True when the request prefers a page to JSON (a browser's navigation or form post). */
export function wantsPage(ctx: HttpContext): boolean {
  return ctx.accepts('json', 'html') === 'html';
}

export function sendOutagePage(ctx: HttpContext, retryAfterSeconds: number): void {
  ctx.status = 503;
  ctx.set('Retry-After', String(retryAfterSeconds));
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Content-Security-Policy', PAGE_POLICY);
  ctx.set('X-Frame-Options', 'DENY');
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Temporarily unavailable · Guest Pass</title>
<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;line-height:1.5}</style>
</head>
<body>
<main>
<h1>Temporarily unavailable</h1>
<p role="alert">The service cannot do this just now. Nothing was changed. Wait a few seconds, then try again.</p>
</main>
</body>
</html>
`.value;
}
