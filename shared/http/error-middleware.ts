// THE error middleware: the only place that turns a thrown error into a response. Handlers and
// middleware throw the typed errors of shared/errors.ts (and shared/http/http-errors.ts); this
// renders each family in the spec's shape:
//
//   OAuth protocol error (RFC 6749)      {error, error_description}    (+ WWW-Authenticate: Basic on invalid_client after Basic)
//   401/403 Bearer challenge (RFC 6750)  {error}                       + WWW-Authenticate: Bearer ...
//   402 quota                            {code: 'CAPACITY_EXCEEDED', message, dimension, limit, current, requested}
//   429 rate limit                       {error: 'temporarily_unavailable', retry_after} + Retry-After, RateLimit*, X-RateLimit-Reset
//   every other 4xx (business error)     {success: false, error: <text>, code: <code>[, details]}
//   a part down (shared/outage/)         503 {success: false, error: 'temporarily_unavailable', code, retry_after} + Retry-After,
//                                        or the outage page to a browser; logged once per outage, not per request
//   anything unexpected                  500 {success: false, error: 'internal error'} and one log line
//
// Of the spec's two allowed business-error forms we use `{success: false, error}` everywhere
// and add a stable machine `code` (clients branch on `code`, never on the text).
import { rateLimitHeaders } from './rate-limit-headers.js';
import { DomainError, InsufficientScopeError, InvalidTokenError, QuotaExceededError, RateLimitedError, ValidationError } from '../errors.js';
import type { HttpContext, HttpMiddleware } from './http-state.js';
import { countRateLimited } from '../metrics/http-metrics.js';
import { InvalidClient, OAuthError, TemporarilyUnavailable, toOAuthErrorBody } from '../oauth/oauth-errors.js';
import { OUTAGE_RETRY_AFTER_SECONDS, outageOf, recordOutage } from '../outage/part-unavailable.js';
import { sendOutagePage, wantsPage } from './outage-page.js';

export const BEARER_REALM = 'guestpass';

/** Codes for errors raised by Koa or its libraries (http-errors with `expose`), by status. */
const HTTP_ERROR_CODES: Readonly<Record<number, string>> = {
  400: 'bad_request',
  404: 'not_found',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
};

interface ExposedHttpError {
  status: number;
  expose: true;
  message: string;
}

function isExposedHttpError(error: unknown): error is ExposedHttpError {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as Partial<ExposedHttpError>;
  return e.expose === true && typeof e.status === 'number' && e.status >= 400 && e.status < 500;
}

function quoted(value: string): string {
  return `"${value.replace(/["\\]/g, '')}"`;
}

function renderDomainError(ctx: HttpContext, error: DomainError): void {
  ctx.status = error.status;
  if (error instanceof OAuthError) {
    // Protocol errors carry credentials' fate: never cached (RFC 6749 §5.1/§5.2).
    ctx.set('Cache-Control', 'no-store');
    if (error instanceof TemporarilyUnavailable) ctx.set('Retry-After', String(error.retryAfterSeconds));
    if (error instanceof InvalidClient && error.challenge !== null) ctx.set('WWW-Authenticate', error.challenge);
    ctx.body = toOAuthErrorBody(error);
  } else if (error instanceof InvalidTokenError) {
    ctx.set('WWW-Authenticate', `Bearer realm=${quoted(BEARER_REALM)}, error="invalid_token"`);
    ctx.body = { error: 'invalid_token' };
  } else if (error instanceof InsufficientScopeError) {
    ctx.set('WWW-Authenticate', `Bearer realm=${quoted(BEARER_REALM)}, error="insufficient_scope", scope=${quoted(error.scope)}`);
    ctx.body = { error: 'insufficient_scope' };
  } else if (error instanceof QuotaExceededError) {
    ctx.body = {
      code: error.code,
      message: error.message,
      dimension: error.dimension,
      limit: error.limit,
      current: error.current,
      requested: error.requested,
    };
  } else if (error instanceof RateLimitedError) {
    countRateLimited(error.policy);
    const retryAfter = Math.max(1, Math.ceil(error.retryAfterSeconds));
    ctx.set('Retry-After', String(retryAfter));
    ctx.set(rateLimitHeaders({ policy: error.policy, limit: error.limit, windowSeconds: error.windowSeconds, remaining: 0, resetSeconds: retryAfter }));
    ctx.set('X-RateLimit-Reset', String(Math.ceil(Date.now() / 1000) + retryAfter));
    ctx.body = { error: 'temporarily_unavailable', retry_after: retryAfter };
  } else {
    const details = error instanceof ValidationError && error.details.length > 0 ? { details: [...error.details] } : {};
    ctx.body = { success: false, error: error.message, code: error.code, ...details };
  }
}

/** A part is down: the client may try again in a few seconds, and nothing was changed. */
function renderOutage(ctx: HttpContext): void {
  const retryAfter = OUTAGE_RETRY_AFTER_SECONDS;
  if (wantsPage(ctx)) return sendOutagePage(ctx, retryAfter);
  ctx.status = 503;
  ctx.set('Retry-After', String(retryAfter));
  ctx.set('Cache-Control', 'no-store');
  ctx.body = { success: false, error: 'temporarily_unavailable', code: 'temporarily_unavailable', retry_after: retryAfter };
}

export function errorMiddleware(): HttpMiddleware {
  return async function renderErrors(ctx, next) {
    try {
      await next();
    } catch (error) {
      if (ctx.headerSent) {
        ctx.state.log.error({ err: error }, 'error after the response was sent');
        return;
      }
      const outage = error instanceof OAuthError ? null : outageOf(error);
      if (outage !== null) {
        recordOutage(outage, ctx.state.log);
        renderOutage(ctx);
      } else if (error instanceof DomainError) {
        renderDomainError(ctx, error);
      } else if (isExposedHttpError(error)) {
        ctx.status = error.status;
        ctx.body = { success: false, error: error.message, code: HTTP_ERROR_CODES[error.status] ?? 'bad_request' };
      } else {
        ctx.state.log.error({ err: error }, 'unhandled error');
        ctx.status = 500;
        ctx.body = { success: false, error: 'internal error', code: 'internal_error' };
      }
    }
  };
}
