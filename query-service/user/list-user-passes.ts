// GET /api/v1/passes: the passes the signed-in user created in their organization, newest first,
// keyset-paginated and searched exactly like the organization listing (same parameters, same
// cursor rules), without `created_by`, and with the user's monthly `usage` on the first page.
import type Router from '@koa/router';
import type { Knex } from 'knex';
import { READ_MODELS } from '../../shared/db/read-models.js';
import { monthOf } from '../../shared/domain/events.js';
import type { HttpMiddleware, HttpState } from '../../shared/http/http-state.js';
import { validateQuery } from '../../shared/http/schema-validation.js';
import type { PageCursor } from '../../shared/http/page-cursor.js';
import { userPrincipal } from '../../shared/auth/access-token-auth.js';
import { listPassesQuerySchema, normaliseSearch, type ListPassesQuery, type Page } from '../org-passes/list-org-passes.js';
import { toPass, type PassItem } from '../passes/pass-item.js';
import { nextPageCursor, pageOf, passPageQuery, type PassPageOptions, type PassPageRow } from '../passes/pass-page-query.js';

/** The user's monthly invite allowance (spec "Usage block"). */
export interface Usage {
  used: number;
  limit: number;
  remaining: number;
}

export interface UserPassPage extends Page<PassItem> {
  usage?: Usage;
}

export async function listUserPasses(
  db: Knex,
  owner: { orgId: number; userId: number },
  options: PassPageOptions,
): Promise<{ rows: PassPageRow[]; hasMore: boolean }> {
  // Served by the (org_id, created_by, created_at DESC, pass_id DESC) index.
  const rows = (await passPageQuery(db, { 'p.org_id': owner.orgId, 'p.created_by': owner.userId }, options)) as PassPageRow[];
  return pageOf(rows, options.limit);
}

/** Every pass of the user: a count over their own index range, bounded by their monthly allowances. */
export async function userPassCount(db: Knex, owner: { orgId: number; userId: number }): Promise<number> {
  const row = await db(READ_MODELS.passList).where({ org_id: owner.orgId, created_by: owner.userId }).count({ n: '*' }).first();
  return Number(row?.n ?? 0);
}

/**
 * Used: passes counted in the current UTC month (invite_allowance_usage, the same month the
 * guest-invites decider counts in). Limit: the user's own allowance, else the organization's.
 */
export async function usageOf(db: Knex, userId: number, now: Date): Promise<Usage> {
  // The read model's key is `${user_id}:${month}` (projections/invite-allowance-usage-projection.ts).
  const row = (await db({ u: READ_MODELS.users })
    .join({ o: READ_MODELS.organizations }, 'o.org_id', 'u.org_id')
    .leftJoin({ a: READ_MODELS.inviteAllowanceUsage }, (join) => join.onVal('a.usage_key', '=', `${userId}:${monthOf(now)}`))
    .where('u.user_id', userId)
    .first(db.raw('coalesce(u.invite_allowance, o.invite_allowance) AS allowance'), db.raw('coalesce(a.used, 0) AS used'))) as
    | { allowance: number | string; used: number | string }
    | undefined;
  const limit = Number(row?.allowance ?? 0);
  const used = Number(row?.used ?? 0);
  return { used, limit, remaining: Math.max(0, limit - used) };
}

export function listUserPassesRoute(
  router: Router<HttpState>,
  deps: { db: Knex; cursor: PageCursor; authorize: HttpMiddleware; now: () => Date },
): void {
  router.get('/api/v1/passes', deps.authorize, validateQuery(listPassesQuerySchema), async (ctx) => {
    const { userId, orgId } = userPrincipal(ctx);
    const { limit, cursor, search: rawSearch } = ctx.state.query as unknown as ListPassesQuery;
    const search = normaliseSearch(rawSearch);
    const binding = { list: `user-passes:${orgId}:${userId}`, search };
    const after = cursor === undefined ? null : deps.cursor.decode(cursor, binding);
    const owner = { orgId, userId };
    // Independent reads, run together. `total` is unknown while searching, as on the organization list.
    const [{ rows, hasMore }, total, usage] = await Promise.all([
      listUserPasses(deps.db, owner, { limit, after, search }),
      search === null ? userPassCount(deps.db, owner) : null,
      after === null ? usageOf(deps.db, userId, deps.now()) : undefined,
    ]);
    const page: UserPassPage = {
      success: true,
      items: rows.map(toPass),
      total,
      next_cursor: nextPageCursor(deps.cursor, { rows, hasMore }, binding),
      has_more: hasMore,
      ...(usage ? { usage } : {}),
    };
    ctx.body = page;
  });
}
