// The projection model. A projection is a pure module: it names the events it handles, the row
// each event concerns, and how an event changes that row. The runner (runner.ts) owns everything
// with I/O: loading rows, opening sealed guest data, checkpoints, transactions and rebuilds.
import type { Knex } from 'knex';
import type { DomainEvent, GuestDetails, MemberJoined, MemberProfileChanged, PassCreated, Sealed } from '../shared/domain/events.js';
import type { MemberName } from '../shared/domain/member-events.js';
import { positionToString, type Position, type RecordedEvent } from '../shared/event-store/event-store.js';

/** PassCreated as a projection sees it: the guest data opened, or null once its key is destroyed. */
export type OpenedPassCreated = {
  type: 'PassCreated';
  data: Omit<PassCreated['data'], 'guest'> & { guest: GuestDetails | null };
};

/**
 * A member's contact as a projection sees it: still SEALED (read models store contact data
 * encrypted), with the keyed hashes of its email and phone for whole-value search (null when
 * absent, or when the runner was given no ContactHasher). Null as a whole when the member has no
 * contact or its key is destroyed.
 */
export interface OpenedMemberContact {
  readonly sealed: Sealed;
  readonly emailHash: string | null;
  readonly phoneHash: string | null;
}

/** A member profile's sealed parts as a projection sees them: the name opened (null once its key is destroyed). */
type OpenedMemberProfile<E extends MemberJoined | MemberProfileChanged> = {
  type: E['type'];
  data: Omit<E['data'], 'name' | 'contact'> & { name: MemberName | null; contact: OpenedMemberContact | null };
};
export type OpenedMemberJoined = OpenedMemberProfile<MemberJoined>;
export type OpenedMemberProfileChanged = OpenedMemberProfile<MemberProfileChanged>;

/** The events whose sealed data the runner opens (guest-data.ts) for projections that flag `opensGuestData`. */
export const SEALED_EVENT_TYPES: ReadonlySet<string> = new Set(['PassCreated', 'MemberJoined', 'MemberProfileChanged']);

export type OpenedDomainEvent =
  | Exclude<DomainEvent, PassCreated | MemberJoined | MemberProfileChanged>
  | OpenedPassCreated
  | OpenedMemberJoined
  | OpenedMemberProfileChanged;
export type ProjectedEventType = OpenedDomainEvent['type'];

/** What a projection is fed: a recorded event of the catalogue, personal data opened. */
export type ProjectionEvent = OpenedDomainEvent & Omit<RecordedEvent, 'type' | 'data'>;

export type RowKey = string | number;

export interface Projection<Row extends object = object> {
  /** Also the name of the read model's view (READ_MODELS) and of its checkpoint. */
  readonly name: string;
  /** Bumped when rows would come out differently: a runner meeting another version rebuilds. */
  readonly version: number;
  readonly handles: readonly ProjectedEventType[];
  /** Primary-key column of the row; `keyOf` returns values of this column. */
  readonly keyColumn: keyof Row & string;
  /**
   * True when the projection reads sealed personal data (PassCreated's guest, a member's name and
   * contact hashes), so the runner must open it.
   */
  readonly opensGuestData?: boolean;
  /**
   * True for a few rows that many events change (counters): a rebuild keeps them in memory and
   * writes them every few pages (rebuild.ts) rather than rewriting most of them with every page.
   */
  readonly hotRows?: boolean;
  /** The row an event concerns, or null when it concerns none. */
  keyOf(event: ProjectionEvent): RowKey | null;
  /**
   * A new row object, null to delete the row, undefined (or `row` itself) for no change. Must
   * not mutate `row`, which may also carry the runner's columns (copying them along is fine).
   */
  apply(row: Row | undefined, event: ProjectionEvent): Row | null | undefined;
  /**
   * Creates one generation table: columns and primary key (upserts need it). The runner adds
   * its own columns (`_commit`, `_prepare`) afterwards.
   */
  createTable(knex: Knex, tableName: string): Promise<void>;
  /**
   * The secondary indexes queries need. A fresh table gets them at once; a rebuild builds them
   * over the rows it has copied so far, part way through its replay (rebuild.ts), since building
   * an index over loaded rows is several times faster than maintaining it row by row (a trigram
   * GIN index above all).
   */
  readonly indexes?: readonly SecondaryIndex[];
}

/** A secondary index of a generation table, named `{table}_{suffix}`. */
export interface SecondaryIndex {
  readonly suffix: string;
  readonly unique?: boolean;
  /** What follows `ON table`: `(columns)` or `USING method (...)`. */
  readonly on: string;
}

// Projections differ in row type; collections of them are typed loosely on the row.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyProjection = Projection<any>;

/**
 * A row as stored: the projection's columns plus the global position of the last event applied
 * to it (numeric columns, so as strings), which makes applying an event twice a no-op.
 */
export type StoredRow = Record<string, unknown> & { _commit: string; _prepare: string };

export const POSITION_COLUMNS = ['_commit', '_prepare'] as const;

/** An event whose `apply` (or `keyOf`) threw: the projection cannot pass it without a code change. */
export class PoisonEventError extends Error {
  override readonly name = 'PoisonEventError';
  constructor(
    readonly projection: string,
    readonly eventId: string,
    readonly eventType: string,
    readonly position: Position,
    override readonly cause: unknown,
  ) {
    super(
      `projection ${projection} cannot apply event ${eventId} (${eventType} at ${positionToString(position)}): ` +
        (cause instanceof Error ? cause.message : String(cause)),
    );
  }
}

/** Map key for a row key: pg may hand int8 keys back as strings, events carry numbers. */
export function keyString(key: RowKey): string {
  return typeof key === 'number' ? String(key) : key;
}

/**
 * Applies one event to one stored row: skipped when the row already carries this event's
 * position or a later one, otherwise applied and stamped with the event's position. The
 * projection sees the stored row as is (its own columns plus the runner's, which it copies
 * along and which are then overwritten): no copy per event, since rebuilds apply millions.
 */
export function projectEvent(
  projection: AnyProjection,
  row: StoredRow | undefined,
  event: ProjectionEvent,
): StoredRow | null | undefined {
  if (row && !isAfter(event.position, row)) return undefined;
  let next: Record<string, unknown> | null | undefined;
  try {
    next = projection.apply(row, event) as Record<string, unknown> | null | undefined;
  } catch (error) {
    throw new PoisonEventError(projection.name, event.id, event.type, event.position, error);
  }
  // Returning the row it was given is no change (the contract forbids mutating it).
  if (next === undefined || next === row) return undefined;
  if (next === null) return null;
  // `next` is the projection's fresh object: stamping it in place saves a copy.
  next._commit = event.position.commit.toString();
  next._prepare = event.position.prepare.toString();
  return next as StoredRow;
}

/** event.position > the row's position, comparing the decimal strings without parsing them. */
function isAfter(position: Position, row: StoredRow): boolean {
  const c = compareDecimal(position.commit.toString(), String(row._commit));
  return c !== 0 ? c > 0 : compareDecimal(position.prepare.toString(), String(row._prepare)) > 0;
}

/** Compares non-negative integers written in decimal without leading zeros. */
function compareDecimal(a: string, b: string): number {
  if (a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}

export interface RowChanges {
  /** Rows to insert or update, whole. */
  readonly upserts: StoredRow[];
  /** Keys of rows to delete. */
  readonly deletes: RowKey[];
  /** Events the projection applied (not skipped by position, not ignored). */
  readonly applied: number;
}

/** The keys a batch of events touches, for loading those rows in one query. */
export function keysOf(projection: AnyProjection, events: readonly ProjectionEvent[]): RowKey[] {
  const handles = new Set<string>(projection.handles);
  const keys = new Map<string, RowKey>();
  for (const event of events) {
    if (!handles.has(event.type)) continue;
    const key = safeKeyOf(projection, event);
    if (key !== null) keys.set(keyString(key), key);
  }
  return [...keys.values()];
}

/**
 * Applies a batch in order over the rows loaded for it (keyed by keyString) and returns the net
 * changes. Pure: the same inputs give the same changes, and events already reflected in a row
 * change nothing, so replaying a batch over its own result is a no-op.
 */
export function projectBatch(
  projection: AnyProjection,
  loaded: ReadonlyMap<string, StoredRow>,
  events: readonly ProjectionEvent[],
): RowChanges {
  const handles = new Set<string>(projection.handles);
  const current = new Map<string, { key: RowKey; row: StoredRow | null; changed: boolean }>();
  let applied = 0;
  for (const event of events) {
    if (!handles.has(event.type)) continue;
    const key = safeKeyOf(projection, event);
    if (key === null) continue;
    const k = keyString(key);
    let entry = current.get(k);
    if (!entry) {
      entry = { key, row: loaded.get(k) ?? null, changed: false };
      current.set(k, entry);
    }
    const next = projectEvent(projection, entry.row ?? undefined, event);
    if (next === undefined) continue;
    applied++;
    entry.row = next;
    entry.changed = true;
  }
  const upserts: StoredRow[] = [];
  const deletes: RowKey[] = [];
  for (const [k, entry] of current) {
    if (!entry.changed) continue;
    if (entry.row) upserts.push(entry.row);
    else if (loaded.has(k)) deletes.push(entry.key);
  }
  return { upserts, deletes, applied };
}

function safeKeyOf(projection: AnyProjection, event: ProjectionEvent): RowKey | null {
  try {
    return projection.keyOf(event);
  } catch (error) {
    throw new PoisonEventError(projection.name, event.id, event.type, event.position, error);
  }
}

/** Lower-cased search text from the parts present, for trigram search. */
export function searchText(parts: ReadonlyArray<string | null | undefined>): string {
  return parts
    .filter((p): p is string => typeof p === 'string' && p.trim() !== '')
    .map((p) => p.trim().toLowerCase())
    .join(' ');
}
