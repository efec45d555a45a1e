// The keyset page both pass listings read (organization and user): pass_list `p` joined with
// facilities `f`, newest first over (created_at, pass_id), optionally narrowed to a search term.
// One row more than the page is fetched, to know whether another page follows.
import type { Knex } from 'knex';
import type { CursorBinding, KeysetPosition, PageCursor } from '../../shared/http/page-cursor.js';
import { PASS_COLUMNS, passesWithDetails, type PassRow } from './pass-item.js';

export interface PassPageOptions {
  limit: number;
  after: KeysetPosition | null;
  /** Normalised (see normaliseSearch); null for no search. */
  search: string | null;
}

export interface PassPageRow extends PassRow {
  pass_id: number;
  /** created_at exactly as stored (microseconds), for the cursor. */
  cursor_at: string;
}

/** A substring pattern in which LIKE wildcards of the term match themselves. */
export function likePattern(search: string): string {
  return `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** The page query, `limit + 1` rows; `where` picks the listing's passes (and so the index it runs on). */
export function passPageQuery(db: Knex, where: Record<string, number>, options: PassPageOptions): Knex.QueryBuilder {
  const query = passesWithDetails(db)
    .where(where)
    .select(
      'p.pass_id',
      ...PASS_COLUMNS,
      db.raw(`to_char(p.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cursor_at`),
    )
    .orderBy([
      { column: 'p.created_at', order: 'desc' },
      { column: 'p.pass_id', order: 'desc' },
    ])
    .limit(options.limit + 1);
  if (options.search !== null) query.whereRaw(`p.search_text LIKE ? ESCAPE '\\'`, [likePattern(options.search)]);
  if (options.after) query.whereRaw('(p.created_at, p.pass_id) < (?::timestamptz, ?)', [options.after.createdAt, options.after.id]);
  return query;
}

/** The page's rows without the extra one, and whether it was there. */
export function pageOf<Row>(rows: readonly Row[], limit: number): { rows: Row[]; hasMore: boolean } {
  return { rows: rows.slice(0, limit), hasMore: rows.length > limit };
}

/** The cursor naming the page's last row, or null on the last page. */
export function nextPageCursor(cursor: PageCursor, page: { rows: readonly PassPageRow[]; hasMore: boolean }, binding: CursorBinding): string | null {
  const last = page.rows.at(-1);
  return page.hasMore && last ? cursor.encode({ createdAt: last.cursor_at, id: Number(last.pass_id) }, binding) : null;
}
