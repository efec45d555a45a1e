// Headers every response carries. Resource responses under /api carry credentials or personal
// data, so none of them may be stored by a cache (the spec's "Cache-Control: no-store").
import type { HttpMiddleware } from './http-state.js';

/** Browsers keep to https for a year once they have seen it (RFC 6797). */
export const HSTS = 'max-age=31536000; includeSubDomains';

/** `https`: the service is reached over https (PUBLIC_BASE_URL), so every answer asks for HSTS. */
export function securityHeaders(options: { https?: boolean } = {}): HttpMiddleware {
  return async function setSecurityHeaders(ctx, next) {
    if (options.https) ctx.set('Strict-Transport-Security', HSTS);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('X-Frame-Options', 'DENY');
    if (ctx.path === '/api' || ctx.path.startsWith('/api/')) {
      ctx.set('Cache-Control', 'no-store');
      ctx.set('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'");
    }
    await next();
  };
}
