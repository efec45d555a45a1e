// The user-delegated reads: GET /api/v1/passes[/{id}], GET /api/v1/invites, and UserInfo.
import Router from '@koa/router';
import type { Knex } from 'knex';
import type { HttpState } from '../../shared/http/http-state.js';
import type { PageCursor } from '../../shared/http/page-cursor.js';
import type { OAuthServices } from '../../shared/oauth/oauth-services.js';

export interface UserRoutesDeps {
  readonly db: Knex;
  readonly cursor: PageCursor;
  readonly oauth: Pick<OAuthServices, 'issuer' | 'verificationKeys'>;
  readonly trustProxy: boolean;
}

export function userRoutes(_deps: UserRoutesDeps): Router<HttpState> {
  return new Router<HttpState>();
}
