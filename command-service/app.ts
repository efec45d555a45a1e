// The command service's HTTP app, built from injected ports (tests and the embedded runner
// compose the same pieces; main.ts runs it alone). Middleware in the order a request meets it.
import type { Config } from '../shared/config.js';
import type { Logger } from '../shared/logger.js';
import type Koa from 'koa';
import { RateLimiter, type RateLimitPolicy } from '../shared/http/rate-limit.js';
import { memoryRateLimitStore, type RateLimitStore } from '../shared/http/rate-limit-store.js';
import { USER_API_RATE_LIMIT } from '../shared/auth/access-token-auth.js';
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
  readonly config: Pick<Config, 'trustProxy'> & Partial<Pick<Config, 'oauthClientRateLimit'>>;
  /** The authorization server's issuer, clients and keys. */
  readonly oauth: OAuthServices;
  /**
   * Where every rate limit and failure throttle counts (rate-limit-store.ts): shared by every
   * instance in production; in one process, give both apps one store. Omitted = in this app.
   */
  readonly rateLimitStore?: RateLimitStore;
  /** Replaces the organization API's per-IP bucket (tests and benchmarks change its policy). */
  readonly orgApiRateLimiter?: RateLimiter;
  /** Replaces the user-delegated API's per-user bucket (tests and benchmarks change its policy). */
  readonly userApiRateLimiter?: RateLimiter;
  /** Overrides of the protocol endpoints' per-address failure budgets (tests lower them). */
  readonly oauthFailureLimit?: Partial<RateLimitPolicy>;
}

export function createCommandApp(appDeps: CommandAppDeps): Koa<HttpState> {
  const { trustProxy } = appDeps.config;
  // Every limiter below counts in one store, this app's own when none is given.
  const deps = { ...appDeps, rateLimitStore: appDeps.rateLimitStore ?? memoryRateLimitStore() };
  const { rateLimitStore } = deps;
  const app = createServiceApp({ logger: deps.logger, trustProxy, rateLimitStore, orgApiRateLimiter: deps.orgApiRateLimiter, publicBaseUrl: deps.oauth.issuer });
  const passLinkBase = deps.oauth.issuer;
  app.use(orgPassRoutes(deps, { trustProxy, passLinkBase }).routes());
  const userApiRateLimiter = deps.userApiRateLimiter ?? new RateLimiter('user-api', USER_API_RATE_LIMIT, rateLimitStore);
  app.use(userPassRoutes(deps, { trustProxy, passLinkBase, rateLimiter: userApiRateLimiter }).routes());
  app.use(oauthProtocolRoutes(deps, { trustProxy, failureLimit: deps.oauthFailureLimit, clientRequestsPerSecond: deps.config.oauthClientRateLimit }).routes());
  app.use(signInRoutes(deps, { trustProxy }).routes());
  app.use(passPageRoutes(deps, { trustProxy }).routes());
  return app;
}
