// The user-delegated reads, authenticated by an OAuth access token: GET /api/v1/passes[/{id}],
// GET /api/v1/invites (all three also need the organization's self_invite role), and UserInfo
// (scope openid, no role). Revocation is checked against the revoked_token_families read model.
import type Router from '@koa/router';
import { serviceRouter } from '../../shared/http/service-app.js';
import type { Knex } from 'knex';
import type { HttpState } from '../../shared/http/http-state.js';
import type { PageCursor } from '../../shared/http/page-cursor.js';
import type { RateLimiter } from '../../shared/http/rate-limit.js';
import type { OAuthServices } from '../../shared/oauth/oauth-services.js';
import { accessTokenAuth } from '../../shared/auth/access-token-auth.js';
import { readModelAccounts, readModelRevocations } from './read-model-token-standing.js';
import { listUserPassesRoute } from './list-user-passes.js';
import { getUserPassRoute } from './get-user-pass.js';
import { listInvitesRoute } from './list-invites.js';
import { userInfoRoute } from './userinfo.js';

export interface UserRoutesDeps {
  readonly db: Knex;
  readonly cursor: PageCursor;
  readonly oauth: Pick<OAuthServices, 'issuer' | 'verificationKeys'>;
  readonly trustProxy: boolean;
  /**
   * The per-user bucket (120 per minute). Pass the command app's instance when both run in one
   * process, so reads and writes count as one bucket; omitted = one of its own.
   */
  readonly rateLimiter?: RateLimiter;
  readonly now?: () => Date;
}

export function userRoutes(deps: UserRoutesDeps): Router<HttpState> {
  const now = deps.now ?? (() => new Date());
  const access = accessTokenAuth({
    issuer: deps.oauth.issuer,
    verificationKeys: deps.oauth.verificationKeys,
    revocations: readModelRevocations(deps.db),
    accounts: readModelAccounts(deps.db),
    rateLimiter: deps.rateLimiter,
    now,
  });
  const router = serviceRouter();
  listUserPassesRoute(router, { db: deps.db, cursor: deps.cursor, authorize: access('passes:read'), now });
  getUserPassRoute(router, { db: deps.db, authorize: access('passes:read') });
  listInvitesRoute(router, { db: deps.db, authorize: access('invites:read') });
  userInfoRoute(router, { db: deps.db, authorize: access('openid', { role: null }) });
  return router;
}
