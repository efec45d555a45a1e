// /settings/audit (admins): the organization's events from the audit_log read model (ids only),
// newest first, paged, by kind. Names are looked up now, in the read models an admin may read: the
// acting user's name and email (users), a member's name unless the member was erased (then
// nothing of them is shown), a facility's name; a pass by its public id, never its guest.
import type Router from '@koa/router';
import type { Knex } from 'knex';
import type { HttpState } from '../../shared/http/http-state.js';
import { READ_MODELS, type AuditLogRow, type FacilityRow, type MemberDirectoryRow, type UserRow } from '../../shared/db/read-models.js';
import { AUDIT_KINDS } from '../../projections/audit-log-projection.js';
import { pageOf } from '../../query-service/passes/pass-page-query.js';
import type { ConsoleEnv } from '../console-env.js';
import { guard, sendConsolePage } from '../console-guard.js';
import { CONSOLE_PATHS } from '../console-paths.js';
import { consoleUser } from '../console-user.js';
import { auditPage, eventWords, utcDateTime, type AuditEntry } from './audit-pages.js';

const PAGE_SIZE = 50;
type AuditPageRow = AuditLogRow & { cursor_at: string };

/** One page of an organization's audit log, newest first (the org_time or org_kind_time index). */
export function auditPageQuery(db: Knex, orgId: number, kind: string | null, after: { createdAt: string; id: string } | null, limit: number): Knex.QueryBuilder {
  const query = db<AuditLogRow>(READ_MODELS.auditLog)
    .where({ org_id: orgId })
    .select('*', db.raw(`to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cursor_at`))
    .orderBy([
      { column: 'occurred_at', order: 'desc' },
      { column: 'event_id', order: 'desc' },
    ])
    .limit(limit + 1);
  if (kind !== null) query.where({ kind });
  if (after) query.whereRaw('(occurred_at, event_id) < (?::timestamptz, ?::uuid)', [after.createdAt, after.id]);
  return query;
}

/** The names a page of rows shows, each looked up once. */
async function namesFor(db: Knex, orgId: number, rows: readonly AuditLogRow[]) {
  const ids = (type: string) => [...new Set(rows.filter((r) => r.subject_type === type).map((r) => r.subject_id))];
  const userIds = [...new Set([...rows.flatMap((r) => (r.actor_user_id === null ? [] : [Number(r.actor_user_id)])), ...ids('user').map(Number)])];
  const memberIds = ids('member');
  const facilityIds = ids('facility').map(Number);
  const [users, members, erased, facilities] = await Promise.all([
    userIds.length === 0 ? [] : db<UserRow>(READ_MODELS.users).where({ org_id: orgId }).whereIn('user_id', userIds).select('user_id', 'first_name', 'last_name', 'email'),
    memberIds.length === 0 ? [] : db<MemberDirectoryRow>(READ_MODELS.memberDirectory).where({ org_id: orgId }).whereIn('member_id', memberIds).select('member_id', 'name'),
    memberIds.length === 0
      ? []
      : db<AuditLogRow>(READ_MODELS.auditLog).where({ org_id: orgId, subject_type: 'member', event_type: 'MemberErased' }).whereIn('subject_id', memberIds).distinct('subject_id'),
    facilityIds.length === 0 ? [] : db<FacilityRow>(READ_MODELS.facilities).where({ org_id: orgId }).whereIn('facility_id', facilityIds).select('facility_id', 'name'),
  ]);
  return {
    users: new Map(users.map((u) => [Number(u.user_id), `${u.first_name} ${u.last_name} (${u.email})`])),
    members: new Map(members.map((m) => [m.member_id, m.name])),
    erased: new Set(erased.map((e) => e.subject_id)),
    facilities: new Map(facilities.map((f) => [String(f.facility_id), f.name])),
  };
}

type Names = Awaited<ReturnType<typeof namesFor>>;

function whoOf(row: AuditLogRow, names: Names): string {
  const user = row.actor_user_id === null ? null : (names.users.get(Number(row.actor_user_id)) ?? `user ${row.actor_user_id}`);
  switch (row.actor_kind) {
    case 'user':
      return user ?? 'a user';
    case 'apiKey':
      return `API key ${row.actor_key_id ?? ''} of ${user ?? 'an admin'}`;
    case 'operator':
      return 'The service operator';
    default:
      return `The service (${row.actor_name ?? 'system'})`;
  }
}

function onWhatOf(row: AuditLogRow, names: Names): string {
  switch (row.subject_type) {
    case 'member':
      if (names.erased.has(row.subject_id)) return 'An erased member';
      return `Member ${names.members.get(row.subject_id) || row.subject_id}`;
    case 'user':
      return `User ${names.users.get(Number(row.subject_id)) ?? row.subject_id}`;
    case 'facility':
      return `Facility ${names.facilities.get(row.subject_id) ?? row.subject_id}`;
    case 'pass':
      return `Pass ${row.subject_id}`;
    case 'batch':
      return 'A batch of passes';
    case 'api_key':
      return `API key ${row.subject_id}`;
    case 'client':
      return `Client ${row.subject_id}`;
    case 'invitation':
      return `Invitation ${row.subject_id}`;
    default:
      return 'The organization';
  }
}

export function auditSection(router: Router<HttpState>, env: ConsoleEnv): void {
  const { deps, kit } = env;
  const { cursor } = env;

  router.get(CONSOLE_PATHS.audit, ...guard(env, 'admin'), async (ctx) => {
    const user = consoleUser(ctx);
    const kind = typeof ctx.query.kind === 'string' && (AUDIT_KINDS as readonly string[]).includes(ctx.query.kind) ? ctx.query.kind : null;
    const binding = { list: `console-audit:${user.orgId}:${kind ?? 'all'}`, search: null };
    const after = typeof ctx.query.after === 'string' ? cursor.decodeTextId(ctx.query.after, binding) : null;
    const found = (await auditPageQuery(deps.db, user.orgId, kind, after, PAGE_SIZE)) as AuditPageRow[];
    const { rows, hasMore } = pageOf(found, PAGE_SIZE);
    const names = await namesFor(deps.db, user.orgId, rows);
    const entries: AuditEntry[] = rows.map((r) => ({ when: utcDateTime(r.occurred_at), who: whoOf(r, names), what: eventWords(r.event_type), onWhat: onWhatOf(r, names) }));
    const last = rows.at(-1);
    const next = hasMore && last ? cursor.encode({ createdAt: last.cursor_at, id: last.event_id }, binding) : null;
    const query = new URLSearchParams({ ...(kind !== null ? { kind } : {}), ...(next !== null ? { after: next } : {}) });
    sendConsolePage(ctx, auditPage({ user, csrfToken: kit.csrfToken(ctx), kind: kind ?? '', entries, nextHref: next === null ? null : `${CONSOLE_PATHS.audit}?${query.toString()}` }));
  });
}
