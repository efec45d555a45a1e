// The command service's HTTP app, built from injected ports (tests and the embedded runner
// compose the same pieces; main.ts runs it alone). Middleware in the order a request meets it.
import type Koa from 'koa';
import { RateLimiter } from '../shared/http/rate-limit.js';
import { memoryRateLimitStore } from '../shared/http/rate-limit-store.js';
import { USER_API_RATE_LIMIT } from '../shared/auth/access-token-auth.js';
import { createServiceApp } from '../shared/http/service-app.js';
import type { HttpState } from '../shared/http/http-state.js';
import type { CommandAppDeps } from './command-app-deps.js';
import { orgPassRoutes } from './http/org-pass-routes.js';
import { userPassRoutes } from './http/user-pass-routes.js';
import { oauthProtocolRoutes } from './oauth/oauth-routes.js';
import { signInRoutes } from './sign-in/sign-in-routes.js';
import { passPageRoutes } from './pass-page/pass-page-routes.js';
import { consoleRoutes } from '../console/console-routes.js';
import { auditKeysRoute } from './audit/audit-keys-route.js';


export function createCommandApp(appDeps: CommandAppDeps): Koa<HttpState> {
  const { trustProxy } = appDeps.config;
  if (!appDeps.config.pageCursorSecret) {
    appDeps.logger.warn('PAGE_CURSOR_SECRET is not set: the console\'s page cursors are signed with a per-process random key');
  }
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
  app.use(consoleRoutes(deps, { trustProxy }).routes());
  app.use(auditKeysRoute(deps.db).routes());
  return app;
}
