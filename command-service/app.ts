// The command service's HTTP app, built from injected ports (tests and the embedded runner
// compose the same pieces; main.ts runs it alone). Middleware in the order a request meets it.
import Koa from 'koa';
import type { Config } from '../shared/config.js';
import type { Logger } from '../shared/logger.js';
import { requestId } from '../shared/http/request-id.js';
import { requestLogger } from '../shared/http/request-logger.js';
import { errorMiddleware } from '../shared/http/error-middleware.js';
import { securityHeaders } from '../shared/http/security-headers.js';
import { ORG_API_PREFIX, RateLimiter } from '../shared/http/rate-limit.js';
import { notFound } from '../shared/http/not-found.js';
import type { HttpState } from '../shared/http/http-state.js';
import type { CommandDeps } from './command-deps.js';
import { orgPassRoutes } from './http/org-pass-routes.js';

export interface CommandAppDeps extends CommandDeps {
  readonly logger: Logger;
  readonly config: Pick<Config, 'trustProxy'>;
  /**
   * The organization API's per-IP bucket. Pass the same instance to the query app when both
   * run in one process, so the two count as one bucket; omitted = one of its own.
   */
  readonly orgApiRateLimiter?: RateLimiter;
}

export function createCommandApp(deps: CommandAppDeps): Koa<HttpState> {
  const app = new Koa<HttpState>();
  const { trustProxy } = deps.config;
  const orgApiLimit = (deps.orgApiRateLimiter ?? new RateLimiter('org-api')).middleware({ trustProxy, pathPrefix: ORG_API_PREFIX });
  const orgPasses = orgPassRoutes(deps, { trustProxy });

  app.use(requestId());
  app.use(requestLogger(deps.logger));
  app.use(errorMiddleware());
  app.use(securityHeaders());
  app.use(orgApiLimit);
  app.use(notFound());
  app.use(orgPasses.routes());
  return app;
}
