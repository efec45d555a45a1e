// Headers every response carries. Resource responses under /api carry credentials or personal
// data, so none of them may be stored by a cache (the spec's "Cache-Control: no-store").
import type { HttpMiddleware } from './http-state.js';

export function securityHeaders(): HttpMiddleware {
  return async function setSecurityHeaders(ctx, next) {
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
