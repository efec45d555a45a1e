// GET /api/v1/invites: pending invitations addressed to the signed-in user, from any organization,
// newest first. An invitation is the user's when it names their user id or is addressed to their
// email (spec: "matched by user id or email"). Both read models store addresses lower-cased
// (normaliseEmail), so the match is an equality on the invitations' email index.
import type Router from '@koa/router';
import type { Knex } from 'knex';
import { READ_MODELS } from '../../shared/db/read-models.js';
import type { HttpMiddleware, HttpState } from '../../shared/http/http-state.js';
import { NO_QUERY_PARAMETERS, validateQuery } from '../../shared/http/schema-validation.js';
import { userPrincipal } from '../../shared/auth/access-token-auth.js';

/** The response is not paginated (spec); a bound keeps a flood of invitations from making it unbounded. */
export const MAX_INVITES = 100;

/** Spec "Invite". */
export interface InviteItem {
  id: number;
  role: string | null;
  status: 'pending';
  created_at: string | null;
  /** The inviting organization's display name. */
  organization: string | null;
}

interface InviteRow {
  invite_id: number | string;
  role: string | null;
  created_at: Date | null;
  organization: string | null;
}

export async function listPendingInvites(db: Knex, userId: number): Promise<InviteItem[]> {
  const email = db(READ_MODELS.users).where({ user_id: userId }).select(db.raw('lower(email)'));
  const rows = (await db({ i: READ_MODELS.invitations })
    .leftJoin({ o: READ_MODELS.organizations }, 'o.org_id', 'i.org_id')
    .where('i.status', 'pending')
    .where((match) => match.where('i.user_id', userId).orWhere('i.email', email))
    .orderBy([
      { column: 'i.created_at', order: 'desc' },
      { column: 'i.invite_id', order: 'desc' },
    ])
    .limit(MAX_INVITES)
    .select('i.invite_id', 'i.role', 'i.created_at', 'o.name as organization')) as InviteRow[];
  return rows.map((r) => ({
    id: Number(r.invite_id),
    role: r.role,
    status: 'pending',
    created_at: r.created_at === null ? null : new Date(r.created_at).toISOString(),
    organization: r.organization,
  }));
}

export function listInvitesRoute(router: Router<HttpState>, deps: { db: Knex; authorize: HttpMiddleware }): void {
  router.get('/api/v1/invites', deps.authorize, validateQuery(NO_QUERY_PARAMETERS), async (ctx) => {
    ctx.body = { success: true, invites: await listPendingInvites(deps.db, userPrincipal(ctx).userId) };
  });
}
