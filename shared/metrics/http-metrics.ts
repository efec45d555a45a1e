// Requests by route template, method and status: a count and a latency histogram. The route is
// the @koa/router template that matched (`/api/v1/org/passes/:publicId`), never the raw path, so
// ids and tokens in paths neither multiply the series nor reach the metrics.
import { Counter, Histogram } from 'prom-client';
import type { HttpContext, HttpMiddleware } from '../http/http-state.js';
import { metricsRegistry } from './registry.js';

const LABELS = ['method', 'route', 'status'] as const;

const requests = new Counter({
  name: 'guestpass_http_requests_total',
  help: 'HTTP requests answered, by method, route template and status.',
  labelNames: LABELS,
  registers: [metricsRegistry],
});

const duration = new Histogram({
  name: 'guestpass_http_request_duration_seconds',
  help: 'Time from a request reaching the app to its answer, by method, route template and status.',
  labelNames: LABELS,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [metricsRegistry],
});

const rateLimited = new Counter({
  name: 'guestpass_rate_limited_total',
  help: 'Requests refused with 429 by a rate limit, by the limit policy.',
  labelNames: ['policy'] as const,
  registers: [metricsRegistry],
});

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** What no route matched (404s, requests refused before routing) counts under one label. */
export const UNMATCHED_ROUTE = 'unmatched';

export function routeTemplate(ctx: HttpContext): string {
  const matched = (ctx as unknown as { _matchedRoute?: unknown })._matchedRoute;
  return typeof matched === 'string' && matched !== '' ? matched : matched instanceof RegExp ? String(matched) : UNMATCHED_ROUTE;
}

/** Outermost but for the request id: it sees the final status, after the error renderer. */
export function httpMetrics(): HttpMiddleware {
  return async function measureRequest(ctx, next) {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const labels = { method: METHODS.has(ctx.method) ? ctx.method : 'OTHER', route: routeTemplate(ctx), status: String(ctx.status) };
      requests.inc(labels);
      duration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
    }
  };
}

/** Counts one 429 where a RateLimitedError becomes an answer. */
export function countRateLimited(policy: string): void {
  rateLimited.inc({ policy });
}
