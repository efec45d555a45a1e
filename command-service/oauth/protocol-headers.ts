// Response headers of the protocol endpoints, set before anything can fail so that error answers
// carry them too (the error middleware keeps headers already set).
import type { HttpMiddleware } from '../../shared/http/http-state.js';

const PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * RFC 6749 §5.1: responses that carry tokens (and their errors, §5.2) must not be cached.
 * `cors`: browser apps (public clients) call the endpoint from any origin. Access-Control-Allow-Origin
 * `*` without Allow-Credentials: the browser sends no cookies, so only what the request itself
 * carries (PKCE verifier, refresh token, client id) can authenticate it.
 */
export function protocolHeaders(options: { cors: boolean }): HttpMiddleware {
  return async function setProtocolHeaders(ctx, next) {
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Pragma', 'no-cache');
    if (options.cors) {
      ctx.set('Access-Control-Allow-Origin', '*');
      ctx.set('Access-Control-Expose-Headers', 'WWW-Authenticate, Retry-After, RateLimit, RateLimit-Policy');
    }
    await next();
  };
}

/** The CORS preflight of a form POST endpoint (Authorization carries client_secret_basic). */
export function corsPreflight(): HttpMiddleware {
  return async function answerPreflight(ctx) {
    ctx.set('Access-Control-Allow-Methods', 'POST, OPTIONS');
    ctx.set('Access-Control-Allow-Headers', 'Authorization, Content-Type');
    ctx.set('Access-Control-Max-Age', String(PREFLIGHT_MAX_AGE_SECONDS));
    ctx.status = 204;
  };
}

/** Public, never credential-bearing documents (discovery, key set): readable from any origin, cached briefly. */
export function publicDocumentHeaders(maxAgeSeconds: number): HttpMiddleware {
  return async function setPublicDocumentHeaders(ctx, next) {
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.set('Cache-Control', `public, max-age=${maxAgeSeconds}`);
    await next();
  };
}
