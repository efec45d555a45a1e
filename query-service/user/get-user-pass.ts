// GET /api/v1/passes/{public_id}: one of the user's own passes. Another user's pass, another
// organization's, and no pass at all are the same 404.
import type Router from '@koa/router';
import type { Knex } from 'knex';
import { isPassPublicId } from '../../shared/domain/pass-request.js';
import { NotFoundError } from '../../shared/errors.js';
import type { HttpMiddleware, HttpState } from '../../shared/http/http-state.js';
import { NO_QUERY_PARAMETERS, validateQuery } from '../../shared/http/schema-validation.js';
import { userPrincipal } from '../../shared/auth/access-token-auth.js';
import { PASS_COLUMNS, passesWithDetails, toPass, type PassItem, type PassRow } from '../passes/pass-item.js';

export async function findUserPass(db: Knex, owner: { orgId: number; userId: number }, publicId: string): Promise<PassItem | null> {
  // A malformed id names no pass: no lookup.
  if (!isPassPublicId(publicId)) return null;
  const row = (await passesWithDetails(db)
    .where({ 'p.public_id': publicId, 'p.org_id': owner.orgId, 'p.created_by': owner.userId })
    .first(...PASS_COLUMNS)) as PassRow | undefined;
  return row ? toPass(row) : null;
}

export function getUserPassRoute(router: Router<HttpState>, deps: { db: Knex; authorize: HttpMiddleware }): void {
  router.get('/api/v1/passes/:public_id', deps.authorize, validateQuery(NO_QUERY_PARAMETERS), async (ctx) => {
    const { orgId, userId } = userPrincipal(ctx);
    const pass = await findUserPass(deps.db, { orgId, userId }, ctx.params.public_id ?? '');
    if (!pass) throw new NotFoundError('pass not found');
    ctx.body = { success: true, pass };
  });
}
