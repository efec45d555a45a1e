// The OAuth protocol endpoints of the command service: discovery, JWKS, token, introspect, revoke.
// (Authorize, sign-in, consent and logout are the browser-facing side: command-service/sign-in.)
import type Router from '@koa/router';
import { serviceRouter } from '../../shared/http/service-app.js';
import type { HttpState } from '../../shared/http/http-state.js';
import type { RateLimitPolicy } from '../../shared/http/rate-limit.js';
import { OAUTH_PATHS } from '../../shared/oauth/discovery.js';
import type { CommandAppDeps } from '../command-app-deps.js';
import { CoalescingClientDirectory } from './coalescing-client-directory.js';
import { discoveryRoutes } from './discovery-routes.js';
import { introspectEndpoint } from './introspect.js';
import type { ProtocolDeps } from './protocol-deps.js';
import { protocolErrors } from './protocol-errors.js';
import { corsPreflight, protocolHeaders } from './protocol-headers.js';
import { revokeEndpoint } from './revoke.js';
import { tokenEndpoint } from './token-endpoint.js';
import { protocolLimits } from './protocol-rate-limits.js';
import { failureBudget } from './failure-budget.js';
import type { RateLimiter } from '../../shared/http/rate-limit.js';

export interface OAuthProtocolRouteOptions {
  readonly trustProxy: boolean;
  /** Overrides of the per-address failure budgets (protocol-rate-limits.ts), for tests. */
  readonly failureLimit?: Partial<RateLimitPolicy>;
  /** OAUTH_CLIENT_RATE_LIMIT: requests per second per authenticated client and endpoint. */
  readonly clientRequestsPerSecond?: number;
  /** How long a found client is reused by client authentication (DEFAULT_CLIENT_MAX_AGE_MS; 0 = never). */
  readonly clientMaxAgeMs?: number;
}

export function oauthProtocolRoutes(appDeps: CommandAppDeps, options: OAuthProtocolRouteOptions): Router<HttpState> {
  const router = serviceRouter();
  router.use(discoveryRoutes(appDeps.oauth).routes());

  const { issuer, signingKeys, verificationKeys } = appDeps.oauth;
  const clients = new CoalescingClientDirectory(appDeps.oauth.clients, { maxAgeMs: options.clientMaxAgeMs });
  const deps: ProtocolDeps = { handler: appDeps.handler, oauth: { issuer, clients, signingKeys, verificationKeys } };

  // Browser apps (public clients) call token and revoke directly: CORS-open, no cookies.
  // Introspection is for confidential clients, i.e. backends: no CORS.
  const cors = protocolHeaders({ cors: true });
  const limits = protocolLimits(appDeps.rateLimitStore, { failureOverrides: options.failureLimit, clientRequestsPerSecond: options.clientRequestsPerSecond });
  const failures = (limiter: RateLimiter) => failureBudget(limiter, { trustProxy: options.trustProxy });

  const errors = protocolErrors();

  router.options(OAUTH_PATHS.token, cors, corsPreflight());
  router.post(OAUTH_PATHS.token, cors, errors, failures(limits.tokenByAddress), tokenEndpoint(deps, limits.tokenByClient));

  router.post(OAUTH_PATHS.introspect, protocolHeaders({ cors: false }), errors, failures(limits.introspectByAddress), introspectEndpoint(deps, limits.introspectByClient));

  router.options(OAUTH_PATHS.revoke, cors, corsPreflight());
  router.post(OAUTH_PATHS.revoke, cors, errors, failures(limits.revokeByAddress), revokeEndpoint(deps, limits.revokeByClient));
  return router;
}
