// The query service's HTTP app: every GET of /api/v1/*, answered from the read models only.
// Middleware in the order a request meets it.
import type Koa from 'koa';
import type { Knex } from 'knex';
import type { Config } from '../shared/config.js';
import type { Logger } from '../shared/logger.js';
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
import type { SubjectKeyStore } from '../shared/crypto/subject-keys.js';
import type { ContactHasher } from '../shared/crypto/contact-search.js';
import { RateLimiter } from '../shared/http/rate-limit.js';
import { memoryRateLimitStore, type RateLimitStore } from '../shared/http/rate-limit-store.js';
import { accessTokenAuth, USER_API_RATE_LIMIT } from '../shared/auth/access-token-auth.js';
import { readModelAccounts, readModelRevocations } from './user/read-model-token-standing.js';
import { EMPLOYEE_VIEW_ROLE, MEMBERS_USER_SCOPE, memberDirectoryAccess } from './members/member-access.js';
import { listMembersRoute } from './members/list-members.js';
import { getMemberRoute } from './members/get-member.js';
import { orgAuditEventsRoute } from './audit/org-audit-events.js';

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
  /**
   * Where the rate limits count (rate-limit-store.ts): shared by every instance in production;
   * in one process, the command app's store. Omitted = in this app.
   */
  readonly rateLimitStore?: RateLimitStore;
  /** Replaces the organization API's per-IP bucket (tests and benchmarks change its policy). */
  readonly orgApiRateLimiter?: RateLimiter;
  /** Replaces the user-delegated API's per-user bucket (tests and benchmarks change its policy). */
  readonly userApiRateLimiter?: RateLimiter;
  /** When given, API keys are cached until the api_keys read model changes. */
  readonly readModelChanges?: ReadModelChanges;
  /** Opens members' sealed contact for the contact tier (one query per page). */
  readonly subjectKeys: SubjectKeyStore;
  /** Hashes an email or phone searched for, as the projections hashed the stored ones. */
  readonly contactHasher: ContactHasher;
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
  orgAuditEventsRoute(org, { db: deps.db, cursor, authenticate });
  // The member directory takes an API key or a user token (employee_view role) at the same path;
  // the user token shares the user-delegated API's per-user bucket.
  const rateLimitStore = deps.rateLimitStore ?? memoryRateLimitStore();
  const userApiRateLimiter = deps.userApiRateLimiter ?? new RateLimiter('user-api', USER_API_RATE_LIMIT, rateLimitStore);
  const userAccess = accessTokenAuth({
    issuer: deps.oauth.issuer,
    verificationKeys: deps.oauth.verificationKeys,
    revocations: readModelRevocations(deps.db),
    accounts: readModelAccounts(deps.db),
    rateLimiter: userApiRateLimiter,
  });
  const memberReader = memberDirectoryAccess({ apiKey: authenticate, userToken: userAccess(MEMBERS_USER_SCOPE, { role: EMPLOYEE_VIEW_ROLE }) });
  listMembersRoute(org, { db: deps.db, cursor, authenticate: memberReader, subjectKeys: deps.subjectKeys, contactHasher: deps.contactHasher });
  getMemberRoute(org, { db: deps.db, authenticate: memberReader, subjectKeys: deps.subjectKeys });

  const openApi = JSON.stringify(buildOpenApiDocument());
  const publicRoutes = serviceRouter('/api/v1');
  publicRoutes.get('/openapi.json', (ctx) => {
    ctx.type = 'application/json';
    ctx.body = openApi;
  });

  const app = createServiceApp({ logger: deps.logger, trustProxy, rateLimitStore, orgApiRateLimiter: deps.orgApiRateLimiter, publicBaseUrl: deps.oauth.issuer });
  app.use(publicRoutes.routes());
  app.use(org.routes());
  app.use(userRoutes({ db: deps.db, cursor, oauth: deps.oauth, trustProxy, rateLimiter: userApiRateLimiter }).routes());
  return app;
}
