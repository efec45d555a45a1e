// GET /api/v1/org/members: the organization's member directory, newest first, keyset-paginated
// over (created_at, member_id), by status (active by default), optionally searched: a
// case-insensitive substring of the name (trigram index on lower(name)) and, for the contact
// tier only, the whole email or phone by keyed hash (the directory keeps contact data sealed, so
// it can only be matched whole, never by substring). Without the contact tier a search matches
// names only, so an email search then finds nothing and tells nothing about the address.
import type Router from '@koa/router';
import type { Knex } from 'knex';
import type { ContactHasher } from '../../shared/crypto/contact-search.js';
import type { SubjectKeyStore } from '../../shared/crypto/subject-keys.js';
import { READ_MODELS } from '../../shared/db/read-models.js';
import type { HttpMiddleware, HttpState } from '../../shared/http/http-state.js';
import type { KeysetPosition, PageCursor } from '../../shared/http/page-cursor.js';
import { validateQuery, type JsonSchema } from '../../shared/http/schema-validation.js';
import { requirePrincipal } from '../../shared/auth/principal.js';
import { likePattern, pageOf } from '../passes/pass-page-query.js';
import { MAX_SEARCH_LENGTH, normaliseSearch, PAGE_PARAMETERS, type Page } from '../org-passes/list-org-passes.js';
import { memberTierOf, MEMBER_FIELDS, selectMemberFields, wantsContact, type MemberField, type MemberTier } from './member-fields.js';
import { memberColumns, memberDirectory, openContacts, toMemberItem, type MemberItem, type MemberItemRow } from './member-item.js';

export const MEMBER_STATUSES = ['active', 'inactive', 'all'] as const;
export type MemberStatusFilter = (typeof MEMBER_STATUSES)[number];

export const fieldsParameter = {
  type: 'string',
  minLength: 1,
  maxLength: 200,
  description: `Comma-separated subset of the Member fields (${MEMBER_FIELDS.join(', ')}). Omitted: every field the credential may see. ` +
    'An unknown field is 400; `email` or `phone` without `org:members:contact:read` is 403 insufficient_scope.',
} as const;

/** Validates the query string and feeds the OpenAPI parameters. Unknown parameters are 400. */
export const listMembersQuerySchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...PAGE_PARAMETERS,
    search: {
      type: 'string',
      maxLength: MAX_SEARCH_LENGTH,
      description:
        'Case-insensitive substring of the name; with `org:members:contact:read` (or a user token) also the whole email ' +
        'address or phone number (exact match, case and phone punctuation ignored).',
    },
    fields: fieldsParameter,
    status: { type: 'string', enum: [...MEMBER_STATUSES], default: 'active', description: '`active` (default), `inactive` or `all`.' },
  },
};

interface ListMembersQuery {
  limit: number;
  cursor?: string;
  search?: string;
  fields?: string;
  status: MemberStatusFilter;
}

/** A search: the normalised term for names, and the hashes an email or phone would have (contact tier only). */
export interface MemberSearch {
  readonly term: string;
  readonly emailHash: string | null;
  readonly phoneHash: string | null;
}

export interface MemberPageOptions {
  readonly orgId: number;
  readonly status: MemberStatusFilter;
  readonly limit: number;
  readonly after: KeysetPosition<string> | null;
  readonly search: MemberSearch | null;
  readonly fields: readonly MemberField[];
}

/** The search of a tier: hashes only for the contact tier, and only for terms that can be an email or a phone. */
export function memberSearch(term: string | null, tier: MemberTier, hasher: ContactHasher): MemberSearch | null {
  if (term === null) return null;
  if (tier !== 'contact') return { term, emailHash: null, phoneHash: null };
  const digits = term.replace(/\D/g, '').length;
  return {
    term,
    emailHash: term.includes('@') ? hasher.hash('email', term) : null,
    phoneHash: digits >= 7 && /^[+\d\s().-]+$/.test(term) ? hasher.hash('phone', term) : null,
  };
}

/** The page query: `limit + 1` rows of one organization, newest first; the status picks the index. */
export function memberPageQuery(db: Knex, options: MemberPageOptions): Knex.QueryBuilder {
  const query = memberDirectory(db)
    .where({ org_id: options.orgId })
    .select(memberColumns(db, options.fields))
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'member_id', order: 'desc' },
    ])
    .limit(options.limit + 1);
  if (options.status !== 'all') query.where({ status: options.status });
  const search = options.search;
  if (search) {
    query.where((q) => {
      q.whereRaw(`lower(name) LIKE ? ESCAPE '\\'`, [likePattern(search.term)]);
      if (search.emailHash) q.orWhere({ email_hash: search.emailHash });
      if (search.phoneHash) q.orWhere({ phone_hash: search.phoneHash });
    });
  }
  if (options.after) query.whereRaw('(created_at, member_id) < (?::timestamptz, ?)', [options.after.createdAt, options.after.id]);
  // `total` rides along in the page query when there is no search (one round trip); only an
  // empty page needs memberTotal.
  if (!search) query.select(db.raw(`(SELECT ${totalExpression(options.status)} FROM ?? WHERE org_id = ?) AS member_total`, [READ_MODELS.memberCounts, options.orgId]));
  return query;
}

const totalExpression = (status: MemberStatusFilter) => (status === 'all' ? 'active + inactive' : status);

/** Members of the organization with a status, from member_counts (no count(*) over the directory). */
export async function memberTotal(db: Knex, orgId: number, status: MemberStatusFilter): Promise<number> {
  const row = await db(READ_MODELS.memberCounts).where({ org_id: orgId }).first('active', 'inactive');
  if (!row) return 0;
  const active = Number(row.active);
  const inactive = Number(row.inactive);
  return status === 'active' ? active : status === 'inactive' ? inactive : active + inactive;
}

export interface MemberListDeps {
  readonly db: Knex;
  readonly cursor: PageCursor;
  readonly authenticate: HttpMiddleware;
  readonly subjectKeys: SubjectKeyStore;
  readonly contactHasher: ContactHasher;
}

export function listMembersRoute(router: Router<HttpState>, deps: MemberListDeps): void {
  router.get('/members', deps.authenticate, validateQuery(listMembersQuerySchema), async (ctx) => {
    const principal = requirePrincipal(ctx.state);
    const tier = memberTierOf(principal);
    const query = ctx.state.query as unknown as ListMembersQuery;
    const fields = selectMemberFields(query.fields, tier);
    const term = normaliseSearch(query.search);
    // What the rows mean depends on all of these: a cursor replayed with another of them is refused.
    const binding = { list: `org-members:${principal.orgId}:${query.status}:${tier}`, search: term };
    const after = query.cursor === undefined ? null : deps.cursor.decodeTextId(query.cursor, binding);
    const options: MemberPageOptions = {
      orgId: principal.orgId,
      status: query.status,
      limit: query.limit,
      after,
      search: memberSearch(term, tier, deps.contactHasher),
      fields,
    };
    const found = (await memberPageQuery(deps.db, options)) as Array<MemberItemRow & { member_total?: string | number | null }>;
    let total: number | null = null;
    if (term === null) total = found[0] ? Number(found[0].member_total ?? 0) : await memberTotal(deps.db, principal.orgId, query.status);
    const { rows, hasMore } = pageOf(found, query.limit);
    const contacts = wantsContact(fields) ? await openContacts(rows, deps.subjectKeys) : new Map();
    const last = rows.at(-1);
    const page: Page<MemberItem> = {
      success: true,
      items: rows.map((row) => toMemberItem(row, fields, contacts)),
      total,
      next_cursor: hasMore && last ? deps.cursor.encode({ createdAt: last.cursor_at, id: last.member_id }, binding) : null,
      has_more: hasMore,
    };
    ctx.body = page;
  });
}
