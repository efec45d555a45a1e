// GET /api/v1/org/members/{public_id}: one member of the caller's organization, inactive ones
// included. Another organization's member, an unknown id and a malformed id are the same 404.
import type Router from '@koa/router';
import type { Knex } from 'knex';
import type { SubjectKeyStore } from '../../shared/crypto/subject-keys.js';
import { MEMBER_ID_PATTERN } from '../../shared/domain/member-events.js';
import { NotFoundError } from '../../shared/errors.js';
import type { HttpMiddleware, HttpState } from '../../shared/http/http-state.js';
import { validateQuery, type JsonSchema } from '../../shared/http/schema-validation.js';
import { requirePrincipal } from '../../shared/auth/principal.js';
import { memberTierOf, selectMemberFields, wantsContact } from './member-fields.js';
import { memberColumns, memberDirectory, openContacts, toMemberItem, type MemberItemRow } from './member-item.js';
import { fieldsParameter } from './list-members.js';

export const getMemberQuerySchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { fields: fieldsParameter },
};

const MEMBER_ID = new RegExp(MEMBER_ID_PATTERN);

export function getMemberRoute(router: Router<HttpState>, deps: { db: Knex; authenticate: HttpMiddleware; subjectKeys: SubjectKeyStore }): void {
  router.get('/members/:public_id', deps.authenticate, validateQuery(getMemberQuerySchema), async (ctx) => {
    const principal = requirePrincipal(ctx.state);
    const fields = selectMemberFields((ctx.state.query as { fields?: string }).fields, memberTierOf(principal));
    const memberId = ctx.params.public_id ?? '';
    // A malformed id names no member: no lookup.
    const row = MEMBER_ID.test(memberId)
      ? ((await memberDirectory(deps.db).where({ member_id: memberId, org_id: principal.orgId }).first(memberColumns(deps.db, fields))) as
          | MemberItemRow
          | undefined)
      : undefined;
    if (!row) throw new NotFoundError('member not found');
    const contacts = wantsContact(fields) ? await openContacts([row], deps.subjectKeys) : new Map();
    ctx.body = { success: true, member: toMemberItem(row, fields, contacts) };
  });
}
