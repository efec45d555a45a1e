// The front of every HTTP app, in the order a request meets it: request id and logging, metrics
// (count and latency by route template), the one error renderer, security headers, the
// organization API's rate limit, then 404 for what no route answers. Each service adds its
// routes after it.
import Koa from 'koa';
import Router from '@koa/router';
import type { Logger } from '../logger.js';
import { requestId } from './request-id.js';
import { requestLogger } from './request-logger.js';
import { errorMiddleware } from './error-middleware.js';
import { httpMetrics } from '../metrics/http-metrics.js';
import { securityHeaders } from './security-headers.js';
import { ORG_API_PREFIX, ORG_API_RATE_LIMIT, RateLimiter } from './rate-limit.js';
import type { RateLimitStore } from './rate-limit-store.js';
import { notFound } from './not-found.js';
import type { HttpState } from './http-state.js';

export interface ServiceAppOptions {
  readonly logger: Logger;
  readonly trustProxy: boolean;
  /** Where the organization API's per-IP bucket counts (see rate-limit-store.ts); omitted = this app. */
  readonly rateLimitStore?: RateLimitStore;
  /** Replaces the organization API's bucket (tests and benchmarks change its policy). */
  readonly orgApiRateLimiter?: RateLimiter;
  /** The address clients reach the service at (PUBLIC_BASE_URL): https asks browsers for HSTS. */
  readonly publicBaseUrl?: string;
}

export function createServiceApp({ logger, trustProxy, rateLimitStore, orgApiRateLimiter, publicBaseUrl }: ServiceAppOptions): Koa<HttpState> {
  const app = new Koa<HttpState>();
  app.use(requestId());
  app.use(requestLogger(logger));
  app.use(httpMetrics());
  app.use(errorMiddleware());
  app.use(securityHeaders({ https: publicBaseUrl?.startsWith('https://') ?? false }));
  app.use((orgApiRateLimiter ?? new RateLimiter('org-api', ORG_API_RATE_LIMIT, rateLimitStore)).middleware({ trustProxy, pathPrefix: ORG_API_PREFIX }));
  app.use(notFound());
  return app;
}

/**
 * A router of a service. Case-sensitive, like the path checks made before routing (no-store, the
 * rate limits): `/API/...` must not reach a route past them.
 */
export function serviceRouter(prefix?: string): Router<HttpState> {
  return new Router<HttpState>(prefix === undefined ? { sensitive: true } : { prefix, sensitive: true });
}
