// The rows a rebuild holds in memory for one target between its page writes. The rows of the
// write in flight, always: the table shows them only once it commits, and the next page is
// projected meanwhile. For a projection of hot rows (counters that many events change), every
// row it has touched, written every few pages rather than with each page: a page rewrote most of
// them, and those rewrites were a large share of a rebuild's work.
import { keyString, type RowChanges, type RowKey, type StoredRow } from './projection.js';
import type { EventSpan, RowWrites } from './table-writer.js';

interface CarriedRow {
  readonly key: RowKey;
  /** The row as projected so far; null when there is none (never was, or deleted). */
  row: StoredRow | null;
  /** Whether the table holds the key once the writes sent so far commit. */
  stored: boolean;
}

export class CarriedRows {
  /**
   * @param holdUpTo how many rows to keep held between writes: every row while there are no more
   *   than this (hot rows), otherwise only the rows of the write in flight. 0 for other projections.
   */
  constructor(private readonly holdUpTo = 0) {}

  private rows = new Map<string, CarriedRow>();
  /** Keys changed since the last take. */
  private readonly dirty = new Set<string>();
  /** Pages projected since the last take, and the span of their events (for error messages). */
  private pages = 0;
  private span: EventSpan | null = null;

  get pagesHeld(): number {
    return this.pages;
  }

  /** The keys whose rows are not held: to load from the table. */
  missing(keys: readonly RowKey[]): RowKey[] {
    return keys.filter((k) => !this.rows.has(keyString(k)));
  }

  /** The rows the table holds of `requested` (those it does not hold have none). */
  addLoaded(requested: readonly RowKey[], loaded: ReadonlyMap<string, StoredRow>): void {
    for (const key of requested) {
      const k = keyString(key);
      const row = loaded.get(k) ?? null;
      this.rows.set(k, { key, row, stored: row !== null });
    }
  }

  /** The existing rows of `keys`, as projectBatch takes them (every key held or loaded before). */
  rowsOf(keys: readonly RowKey[]): Map<string, StoredRow> {
    const rows = new Map<string, StoredRow>();
    for (const key of keys) {
      const k = keyString(key);
      const row = this.rows.get(k)?.row;
      if (row) rows.set(k, row);
    }
    return rows;
  }

  /** A page's changes to the rows (of keys held or loaded before), made by the events of `span`. */
  change(changes: RowChanges, keyColumn: string, span: EventSpan): void {
    for (const row of changes.upserts) this.set(keyString(row[keyColumn] as RowKey), row);
    for (const key of changes.deletes) this.set(keyString(key), null);
    this.pages++;
    this.span = { first: this.span?.first ?? span.first, last: span.last };
  }

  /**
   * The changes since the last take, to send in the next write, with whether the table holds
   * each key before that write (COPY for the rows it does not). Within holdUpTo, the unchanged
   * rows stay held too; otherwise only the rows of this write stay, up to its commit.
   */
  take(): { changes: RowWrites; isStored: (key: string) => boolean; span: EventSpan | null } {
    const upserts: StoredRow[] = [];
    const deletes: RowKey[] = [];
    const storedBefore = new Set<string>();
    const taken = new Map<string, CarriedRow>();
    for (const k of this.dirty) {
      const carried = this.rows.get(k)!;
      if (carried.stored) storedBefore.add(k);
      if (carried.row) upserts.push(carried.row);
      else if (carried.stored) deletes.push(carried.key);
      carried.stored = carried.row !== null; // so the table holds it once this write commits
      taken.set(k, carried);
    }
    const span = this.span;
    this.dirty.clear();
    this.pages = 0;
    this.span = null;
    if (this.rows.size > this.holdUpTo) this.rows = taken;
    return { changes: { upserts, deletes }, isStored: (k) => storedBefore.has(k), span };
  }

  private set(k: string, row: StoredRow | null): void {
    this.rows.get(k)!.row = row;
    this.dirty.add(k);
  }
}
