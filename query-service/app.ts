// The query service's HTTP app: every GET of /api/v1/*, answered from the read models only.
// Middleware in the order a request meets it.
import type Koa from 'koa';
import type { Knex } from 'knex';
import type { Config } from '../shared/config.js';
import type { Logger } from '../shared/logger.js';
import type { RateLimiter } from '../shared/http/rate-limit.js';
import { createServiceApp, serviceRouter } from '../shared/http/service-app.js';
import { PageCursor } from '../shared/http/page-cursor.js';
import type { HttpState } from '../shared/http/http-state.js';
import { apiKeyAuth } from '../shared/auth/api-key-auth.js';
import { listOrgPassesRoute } from './org-passes/list-org-passes.js';
import { listFacilitiesRoute } from './facilities/list-facilities.js';
import { buildOpenApiDocument } from './openapi/openapi-document.js';
import type { OAuthServices } from '../shared/oauth/oauth-services.js';
import { userRoutes } from './user/user-routes.js';
import type { ReadModelChanges } from '../shared/read-model-changes.js';

/**
 * `pageCursorSecret` (PAGE_CURSOR_SECRET) signs page cursors; when null a random one is made at
 * start, so cursors die with the process and are not shared between replicas.
 */
export type QueryAppConfig = Pick<Config, 'trustProxy' | 'pageCursorSecret'>;

export interface QueryAppDeps {
  readonly db: Knex;
  readonly logger: Logger;
  readonly config: QueryAppConfig;
  /** Offline verification of access tokens: the issuer and our public keys. */
  readonly oauth: Pick<OAuthServices, 'issuer' | 'verificationKeys'>;
  /** Shared with the command app when both run in one process (one organization API bucket). */
  readonly orgApiRateLimiter?: RateLimiter;
  /** The user-delegated API's per-user bucket; shared with the command app in one process. */
  readonly userApiRateLimiter?: RateLimiter;
  /** When given, API keys are cached until the api_keys read model changes. */
  readonly readModelChanges?: ReadModelChanges;
}

export function createQueryApp(deps: QueryAppDeps): Koa<HttpState> {
  const { trustProxy, pageCursorSecret } = deps.config;
  if (!pageCursorSecret) {
    deps.logger.warn('PAGE_CURSOR_SECRET is not set: page cursors are signed with a per-process random key');
  }
  const cursor = new PageCursor(pageCursorSecret);
  const authenticate = apiKeyAuth({ db: deps.db, trustProxy, changes: deps.readModelChanges });

  const org = serviceRouter('/api/v1/org');
  listOrgPassesRoute(org, { db: deps.db, cursor, authenticate });
  listFacilitiesRoute(org, { db: deps.db, authenticate });

  const openApi = JSON.stringify(buildOpenApiDocument());
  const publicRoutes = serviceRouter('/api/v1');
  publicRoutes.get('/openapi.json', (ctx) => {
    ctx.type = 'application/json';
    ctx.body = openApi;
  });

  const app = createServiceApp({ logger: deps.logger, trustProxy, orgApiRateLimiter: deps.orgApiRateLimiter });
  app.use(publicRoutes.routes());
  app.use(org.routes());
  app.use(userRoutes({ db: deps.db, cursor, oauth: deps.oauth, trustProxy, rateLimiter: deps.userApiRateLimiter }).routes());
  return app;
}
