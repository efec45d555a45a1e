// The command service's HTTP app, built from injected ports (tests and the embedded runner
// compose the same pieces; main.ts runs it alone). Middleware in the order a request meets it.
import type { Config } from '../shared/config.js';
import type { Logger } from '../shared/logger.js';
import type Koa from 'koa';
import type { RateLimiter, RateLimitPolicy } from '../shared/http/rate-limit.js';
import { createServiceApp } from '../shared/http/service-app.js';
import type { HttpState } from '../shared/http/http-state.js';
import type { CommandDeps } from './command-deps.js';
import { orgPassRoutes } from './http/org-pass-routes.js';
import { userPassRoutes } from './http/user-pass-routes.js';
import type { OAuthServices } from '../shared/oauth/oauth-services.js';
import { oauthProtocolRoutes } from './oauth/oauth-routes.js';
import { signInRoutes } from './sign-in/sign-in-routes.js';
import { passPageRoutes } from './pass-page/pass-page-routes.js';

export interface CommandAppDeps extends CommandDeps {
  readonly logger: Logger;
  readonly config: Pick<Config, 'trustProxy'>;
  /** The authorization server's issuer, clients and keys. */
  readonly oauth: OAuthServices;
  /**
   * The organization API's per-IP bucket. Pass the same instance to the query app when both
   * run in one process, so the two count as one bucket; omitted = one of its own.
   */
  readonly orgApiRateLimiter?: RateLimiter;
  /** The user-delegated API's per-user bucket; share it with the query app in one process. */
  readonly userApiRateLimiter?: RateLimiter;
  /** Overrides of the token endpoint's per-IP limit (benchmarks and tests raise it). */
  readonly oauthTokenRateLimit?: Partial<RateLimitPolicy>;
}

export function createCommandApp(deps: CommandAppDeps): Koa<HttpState> {
  const { trustProxy } = deps.config;
  const app = createServiceApp({ logger: deps.logger, trustProxy, orgApiRateLimiter: deps.orgApiRateLimiter, publicBaseUrl: deps.oauth.issuer });
  const passLinkBase = deps.oauth.issuer;
  app.use(orgPassRoutes(deps, { trustProxy, passLinkBase }).routes());
  app.use(userPassRoutes(deps, { trustProxy, passLinkBase, rateLimiter: deps.userApiRateLimiter }).routes());
  app.use(oauthProtocolRoutes(deps, { trustProxy, tokenRateLimit: deps.oauthTokenRateLimit }).routes());
  app.use(signInRoutes(deps, { trustProxy }).routes());
  app.use(passPageRoutes(deps, { trustProxy }).routes());
  return app;
}
