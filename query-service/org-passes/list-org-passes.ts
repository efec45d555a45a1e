// GET /api/v1/org/passes: every pass of the key's organization, newest first, keyset-paginated
// over (created_at, pass_id), optionally filtered by a case-insensitive substring of the guest's
// names, email or phone (pg_trgm index on pass_list.search_text).
import Router from '@koa/router';
import type { Knex } from 'knex';
import { READ_MODELS, type OrganizationRow } from '../../shared/db/read-models.js';
import type { HttpState } from '../../shared/http/http-state.js';
import { validateQuery, type JsonSchema } from '../../shared/http/schema-validation.js';
import type { KeysetPosition, PageCursor } from '../../shared/http/page-cursor.js';
import { requireScope } from '../../shared/auth/scope-guard.js';
import { requirePrincipal } from '../../shared/auth/principal.js';
import type { HttpMiddleware } from '../../shared/http/http-state.js';

export const DEFAULT_PAGE_SIZE = 30;
export const MAX_PAGE_SIZE = 100;
export const MAX_SEARCH_LENGTH = 100;

/** Validates the query string and feeds the OpenAPI parameters. Unknown parameters are 400. */
export const listPassesQuerySchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE, description: 'Page size.' },
    cursor: { type: 'string', minLength: 1, maxLength: 512, description: 'The previous page\'s `next_cursor`, unchanged.' },
    search: {
      type: 'string',
      maxLength: MAX_SEARCH_LENGTH,
      description: 'Case-insensitive substring of first name, last name, email or phone.',
    },
  },
};

interface ListPassesQuery {
  limit: number;
  cursor?: string;
  search?: string;
}

export interface OrgPassItem {
  public_id: string;
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  phone: string | null;
  status: string;
  created_at: string;
  arrival_date: string;
  arrival_time: string | null;
  facility_id: number | null;
  facility_name: string | null;
  created_by: number;
}

export interface Page<T> {
  success: true;
  items: T[];
  total: number | null;
  next_cursor: string | null;
  has_more: boolean;
}

interface PassPageRow extends Omit<OrgPassItem, 'created_at'> {
  pass_id: number;
  created_at: Date;
  /** created_at exactly as stored (microseconds), for the cursor. */
  cursor_at: string;
  /** organizations.pass_count, selected along when there is no search. */
  org_pass_count?: number;
}

/** Trimmed and lower-cased like pass_list.search_text; blank is no search. Cursors bind to this form. */
export function normaliseSearch(raw: string | undefined): string | null {
  const term = raw?.trim().toLowerCase();
  return term ? term : null;
}

/** A substring pattern in which LIKE wildcards of the term match themselves. */
export function likePattern(search: string): string {
  return `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export async function listOrgPasses(
  db: Knex,
  orgId: number,
  options: { limit: number; after: KeysetPosition | null; search: string | null },
): Promise<{ rows: PassPageRow[]; hasMore: boolean; total: number | null }> {
  const query = db({ p: READ_MODELS.passList })
    .leftJoin({ f: READ_MODELS.facilities }, 'f.facility_id', 'p.facility_id')
    .where('p.org_id', orgId)
    .select(
      'p.pass_id', 'p.public_id', 'p.first_name', 'p.last_name', 'p.email', 'p.phone', 'p.status', 'p.created_at',
      'p.arrival_date', 'p.arrival_time', 'p.facility_id', 'f.name as facility_name', 'p.created_by',
      db.raw(`to_char(p.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cursor_at`),
    )
    .orderBy([
      { column: 'p.created_at', order: 'desc' },
      { column: 'p.pass_id', order: 'desc' },
    ])
    .limit(options.limit + 1);
  if (options.search !== null) query.whereRaw(`p.search_text LIKE ? ESCAPE '\\'`, [likePattern(options.search)]);
  if (options.after) query.whereRaw('(p.created_at, p.pass_id) < (?::timestamptz, ?)', [options.after.createdAt, options.after.id]);

  // `total` is the organization's counter, not a count(*) over millions of rows, and unknown
  // while searching. It rides along in the page query (one round trip); only an empty page
  // needs a query of its own.
  if (options.search === null) {
    query.select(db(READ_MODELS.organizations).where({ org_id: orgId }).select('pass_count').as('org_pass_count'));
  }
  const rows = (await query) as PassPageRow[];
  let total: number | null = null;
  if (options.search === null) {
    total = rows[0] ? Number(rows[0].org_pass_count) : await passCount(db, orgId);
  }
  return { rows: rows.slice(0, options.limit), hasMore: rows.length > options.limit, total };
}

async function passCount(db: Knex, orgId: number): Promise<number> {
  const organization = await db<OrganizationRow>(READ_MODELS.organizations).where({ org_id: orgId }).first('pass_count');
  return Number(organization?.pass_count ?? 0);
}

function toItem(row: PassPageRow): OrgPassItem {
  return {
    public_id: row.public_id,
    first_name: row.first_name,
    last_name: row.last_name,
    email: row.email,
    phone: row.phone,
    status: row.status,
    created_at: new Date(row.created_at).toISOString(),
    arrival_date: row.arrival_date,
    arrival_time: row.arrival_time,
    facility_id: row.facility_id === null ? null : Number(row.facility_id),
    facility_name: row.facility_name,
    created_by: Number(row.created_by),
  };
}

export function listOrgPassesRoute(router: Router<HttpState>, deps: { db: Knex; cursor: PageCursor; authenticate: HttpMiddleware }): void {
  router.get('/passes', deps.authenticate, requireScope('org:passes:read'), validateQuery(listPassesQuerySchema), async (ctx) => {
    const principal = requirePrincipal(ctx.state);
    const { limit, cursor, search: rawSearch } = ctx.state.query as unknown as ListPassesQuery;
    const search = normaliseSearch(rawSearch);
    const binding = { list: `org-passes:${principal.orgId}`, search };
    const after = cursor === undefined ? null : deps.cursor.decode(cursor, binding);
    const { rows, hasMore, total } = await listOrgPasses(deps.db, principal.orgId, { limit, after, search });
    const last = rows.at(-1);
    const page: Page<OrgPassItem> = {
      success: true,
      items: rows.map(toItem),
      total,
      next_cursor: hasMore && last ? deps.cursor.encode({ createdAt: last.cursor_at, id: Number(last.pass_id) }, binding) : null,
      has_more: hasMore,
    };
    ctx.body = page;
  });
}
