// GET /api/v1/org/passes: every pass of the key's organization, newest first, keyset-paginated
// over (created_at, pass_id), optionally filtered by a case-insensitive substring of the guest's
// names, email or phone (pg_trgm index on pass_list.search_text).
import Router from '@koa/router';
import type { Knex } from 'knex';
import { READ_MODELS, type OrganizationRow } from '../../shared/db/read-models.js';
import type { HttpState } from '../../shared/http/http-state.js';
import { validateQuery, type JsonSchema } from '../../shared/http/schema-validation.js';
import type { PageCursor } from '../../shared/http/page-cursor.js';
import { requireScope } from '../../shared/auth/scope-guard.js';
import { requirePrincipal } from '../../shared/auth/principal.js';
import type { HttpMiddleware } from '../../shared/http/http-state.js';
import { toPass, type PassItem } from '../passes/pass-item.js';
import { nextPageCursor, pageOf, passPageQuery, type PassPageOptions, type PassPageRow } from '../passes/pass-page-query.js';

export const DEFAULT_PAGE_SIZE = 30;
export const MAX_PAGE_SIZE = 100;
export const MAX_SEARCH_LENGTH = 100;

/** `limit` and `cursor`, as every keyset-paginated listing takes them. */
export const PAGE_PARAMETERS = {
  limit: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE, description: 'Page size.' },
  cursor: { type: 'string', minLength: 1, maxLength: 512, description: "The previous page's `next_cursor`, unchanged." },
} as const;

/** Validates the query string and feeds the OpenAPI parameters. Unknown parameters are 400. */
export const listPassesQuerySchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...PAGE_PARAMETERS,
    search: {
      type: 'string',
      maxLength: MAX_SEARCH_LENGTH,
      description: 'Case-insensitive substring of first name, last name, email or phone.',
    },
  },
};

/** The query string as validateQuery(listPassesQuerySchema) leaves it (limit defaulted). */
export interface ListPassesQuery {
  limit: number;
  cursor?: string;
  search?: string;
}

/** A pass as organization listings show it: with the inviting user. */
export interface OrgPassItem extends PassItem {
  created_by: number;
}

export interface Page<T> {
  success: true;
  items: T[];
  total: number | null;
  next_cursor: string | null;
  has_more: boolean;
}

interface OrgPassPageRow extends PassPageRow {
  created_by: number;
  /** organizations.pass_count, selected along when there is no search. */
  org_pass_count?: number;
}

/** Trimmed and lower-cased like pass_list.search_text; blank is no search. Cursors bind to this form. */
export function normaliseSearch(raw: string | undefined): string | null {
  const term = raw?.trim().toLowerCase();
  return term ? term : null;
}

export async function listOrgPasses(
  db: Knex,
  orgId: number,
  options: PassPageOptions,
): Promise<{ rows: OrgPassPageRow[]; hasMore: boolean; total: number | null }> {
  const query = passPageQuery(db, { 'p.org_id': orgId }, options).select('p.created_by');

  // `total` is the organization's counter, not a count(*) over millions of rows, and unknown
  // while searching. It rides along in the page query (one round trip); only an empty page
  // needs a query of its own.
  if (options.search === null) {
    query.select(db(READ_MODELS.organizations).where({ org_id: orgId }).select('pass_count').as('org_pass_count'));
  }
  const rows = (await query) as OrgPassPageRow[];
  let total: number | null = null;
  if (options.search === null) {
    total = rows[0] ? Number(rows[0].org_pass_count) : await passCount(db, orgId);
  }
  return { ...pageOf(rows, options.limit), total };
}

async function passCount(db: Knex, orgId: number): Promise<number> {
  const organization = await db<OrganizationRow>(READ_MODELS.organizations).where({ org_id: orgId }).first('pass_count');
  return Number(organization?.pass_count ?? 0);
}

function toItem(row: OrgPassPageRow): OrgPassItem {
  return { ...toPass(row), created_by: Number(row.created_by) };
}

export function listOrgPassesRoute(router: Router<HttpState>, deps: { db: Knex; cursor: PageCursor; authenticate: HttpMiddleware }): void {
  router.get('/passes', deps.authenticate, requireScope('org:passes:read'), validateQuery(listPassesQuerySchema), async (ctx) => {
    const principal = requirePrincipal(ctx.state);
    const { limit, cursor, search: rawSearch } = ctx.state.query as unknown as ListPassesQuery;
    const search = normaliseSearch(rawSearch);
    const binding = { list: `org-passes:${principal.orgId}`, search };
    const after = cursor === undefined ? null : deps.cursor.decode(cursor, binding);
    const { rows, hasMore, total } = await listOrgPasses(deps.db, principal.orgId, { limit, after, search });
    const page: Page<OrgPassItem> = {
      success: true,
      items: rows.map(toItem),
      total,
      next_cursor: nextPageCursor(deps.cursor, { rows, hasMore }, binding),
      has_more: hasMore,
    };
    ctx.body = page;
  });
}
