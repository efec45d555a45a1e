// Blue/green rebuild: replay the whole log into the next generation table of each projection,
// beside the live one, then switch over atomically. Queries keep going to the live table through
// the view until the switch, and then to the new one; the live runner keeps running throughout.
//
// The switch transaction locks the projections' checkpoint rows FOR UPDATE (the live runner
// takes the same rows when it commits a batch, so the two serialise), applies the events that
// arrived since the replay caught up, repoints the views, and moves the checkpoints to the new
// table and position. The runner's next batch reads that row and carries on from there in the
// new table, skipping what the rebuild applied. The old table is dropped afterwards.
//
// The replay's progress is checkpointed in projection_rebuilds with the rows it wrote, so an
// interrupted rebuild resumes where it stopped (in the same event store only). One rebuild per
// projection at a time (a session advisory lock held by the rebuild).
//
// When the checkpoints count in another event store than the configured one (checkpoint-store-
// identity.ts), only a rebuild of every projection may run, and its switch-over adopts the
// configured store: the runner and the reactors then start again.
//
// Where it writes (the targets, their lock) is rebuild-targets.ts. What is left, a little past 500
// lines, is one piece: the Replay's pages, index builds, progress and switch-over share its state.
import type pg from 'pg';
import { createLogger, type Logger } from '../shared/logger.js';
import { comparePositions, START, type Position, type RecordedEvent } from '../shared/event-store/event-store.js';
import { keysOf, projectBatch, type AnyProjection } from './projection.js';
import { ALL_PROJECTIONS, selectProjections } from './all-projections.js';
import { CHECKPOINT_COLUMNS, createIndexes, ensureReadModels, inTransaction, pointView, toCheckpoint, type CheckpointRecord } from './generation-tables.js';
import { guestKeysOf, openGuestData, openGuestDataWith } from './guest-data.js';
import { TableWriter, type PreparedChanges } from './table-writer.js';
import { CarriedRows } from './carried-rows.js';
import { PageWriter } from './page-writer.js';
import { connectionStringOf } from '../shared/db/knex.js';
import { encodeProgress, PROGRESS_CHANNEL, ROWS_CHANGED_CHANNEL } from './progress-channel.js';
import { errorMessage, isDeterministic } from './errors.js';
import type { ProjectionDeps } from './projection-deps.js';
import { adoptCheckpointStore, checkCheckpointStore, EventStoreMismatch } from './checkpoint-store-identity.js';
import { lockRebuilds, prepareTargets, type Target } from './rebuild-targets.js';

export type RebuildPhase = 'replaying' | 'indexing' | 'switching' | 'done';

export interface RebuildProgress {
  readonly projections: readonly string[];
  readonly phase: RebuildPhase;
  /** Events read from the log so far. */
  readonly events: number;
  readonly position: Position;
  /** Head of the log when last looked at. */
  readonly head: Position;
  /**
   * Share of the log's position range this replay has covered, from where it started to the head
   * (positionFraction), or null when unknown: about the share of the events to read in the
   * PostgreSQL log, the share of the log's bytes in EventStoreDB. Not a count of events: show it
   * as a share of the log by position (progress-bar.ts).
   */
  readonly fraction: number | null;
  readonly elapsedMs: number;
  readonly eventsPerSecond: number;
}

export interface RebuildOptions {
  readonly onProgress?: (progress: RebuildProgress) => void;
  /** Events per read and per transaction during the replay. */
  readonly batchSize?: number;
  /** Where names are looked up; default every read-model projection. */
  readonly projections?: readonly AnyProjection[];
  /** Stops between batches; the replay resumes on the next rebuild. */
  readonly signal?: AbortSignal;
  /** Test seam: runs after the replay caught up, right before the switch transaction. */
  readonly beforeSwitch?: () => Promise<void> | void;
}

/** The rebuild was stopped through its signal; its progress is kept, and the next rebuild resumes it. */
export class RebuildStopped extends Error {
  override readonly name = 'RebuildStopped';
  /** `cause`: what failed once the stop was asked for (a server stopped by the same Ctrl-C, say). */
  constructor(cause?: unknown) {
    super('rebuild stopped; run it again to resume', cause === undefined ? undefined : { cause });
  }
}

export interface RebuiltProjection {
  readonly name: string;
  readonly generation: number;
  readonly tableName: string;
  readonly position: Position;
}

export interface RebuildResult {
  readonly projections: readonly RebuiltProjection[];
  readonly events: number;
  readonly durationMs: number;
  readonly eventsPerSecond: number;
}

// Pages of a few thousand events: big enough to amortise round trips, small enough that a page
// dies young in the garbage collector (5,000 measured no faster, with a third more memory).
export const DEFAULT_REBUILD_BATCH_SIZE = 2000;
// Share of the log replayed when the secondary indexes start: built concurrently beside the rest
// of the replay, which is bound by JavaScript and leaves PostgreSQL a core; most rows go in by the
// build, the rest are indexed as they are copied. Measured on 200,000 events: 0.3 to 0.5 alike,
// 0.7 to 1.4 s off 11 to 14 s against building the indexes after the replay (0 is slower).
const INDEXES_FROM = 0.4;
const PAGE_RETRIES = 5;
// Hot rows (Projection.hotRows) are written every this many pages; a target holding more rows
// than HOT_ROWS_HELD keeps only those of its write in flight, like any other.
export const HOT_ROWS_PAGES = 20;
const HOT_ROWS_HELD = 50_000;
const NO_EVENTS = { first: '-', last: '-' };

export async function rebuildProjection(name: string, deps: ProjectionDeps, options: RebuildOptions = {}): Promise<RebuildResult> {
  return rebuildProjections([name], deps, options);
}

/** Rebuilds the named projections (all when none named) together, reading the log once. */
export async function rebuildProjections(
  names: readonly string[] | undefined,
  deps: ProjectionDeps,
  options: RebuildOptions = {},
): Promise<RebuildResult> {
  const selected = selectProjections(names, options.projections ?? ALL_PROJECTIONS).sort((a, b) => (a.name < b.name ? -1 : 1));
  const logger = deps.logger ?? createLogger(process.env.LOG_LEVEL ?? 'info', 'projections');
  const { knex } = deps;
  const check = await checkCheckpointStore(knex, deps.store);
  if (!check.ok) {
    // Positions of the other store are worth nothing here: every read model is rebuilt from this
    // one, or the ones left would go on counting in the other.
    const left = (options.projections ?? ALL_PROJECTIONS).filter((p) => !selected.includes(p)).map((p) => p.name);
    if (left.length > 0) {
      const why = `${check.mismatch.why}; a rebuild of only some read models (${left.join(', ')} left out) cannot adopt this store`;
      throw new EventStoreMismatch(check.mismatch.recorded, check.identity, why);
    }
    logger.warn(
      { eventStore: check.identity, recorded: check.mismatch.recorded },
      'the checkpoints count in another event store: rebuilding every read model from this one, which the switch-over adopts',
    );
  }
  await ensureReadModels(knex, selected);
  const release = await lockRebuilds(knex, selected.map((p) => p.name));
  try {
    const targets = await prepareTargets(knex, selected, logger, { identity: check.identity, adopting: !check.ok });
    return await new Replay(deps, targets, options, logger, check.ok ? null : check.identity).run();
  } finally {
    await release();
  }
}

/** A page of the log, with the keys of its guest data on their way. */
interface Page {
  readonly events: RecordedEvent[];
  readonly guestKeys: Promise<Map<string, Buffer>> | null;
}

class Replay {
  private readonly writer = new TableWriter();
  /** The replay's page writes, once it has one. */
  private pageWriter: PageWriter | null = null;
  private readonly batchSize: number;
  private readonly startedAt = performance.now();
  private events = 0;
  /** The last event counted in `events`: a retry replays pages some targets have seen. */
  private counted: Position = START;
  private head: Position = START;
  private headReadAt = 0;
  /** The secondary index builds, once started. */
  private indexing: Promise<void> | null = null;
  private indexingFailed = false;

  /** Where the replay started: its progress is the share of the log from here to the head. */
  private readonly from: Position;

  constructor(
    private readonly deps: ProjectionDeps,
    private readonly targets: Target[],
    private readonly options: RebuildOptions,
    private readonly logger: Logger,
    /** The configured store's identity when the switch-over adopts it (the checkpoints counted in another). */
    private readonly adopt: string | null,
  ) {
    this.batchSize = options.batchSize ?? DEFAULT_REBUILD_BATCH_SIZE;
    this.from = targets.length === 0 ? START : targets.map((t) => t.position).reduce((a, b) => (comparePositions(a, b) <= 0 ? a : b));
  }

  async run(): Promise<RebuildResult> {
    try {
      await this.refreshHead(true);
      return await this.rebuild();
    } catch (error) {
      throw this.options.signal?.aborted && !(error instanceof RebuildStopped) ? new RebuildStopped(error) : error;
    } finally {
      await this.indexing?.catch(() => undefined); // a failed rebuild leaves no build running behind it
      await this.closePageWriter();
    }
  }

  private async rebuild(): Promise<RebuildResult> {
    let position = await this.replay();
    this.report('indexing', position);
    await this.startIndexes();
    position = await this.replay(); // what arrived since the first replay caught up
    await this.options.beforeSwitch?.();
    this.report('switching', position);
    const oldTables = await this.withRetries(() => this.switchOver());
    const finalPosition = this.targets.map((t) => t.position).reduce((a, b) => (comparePositions(a, b) >= 0 ? a : b));
    for (const old of oldTables) await this.dropOld(old);
    this.report('done', finalPosition);
    const durationMs = performance.now() - this.startedAt;
    const result: RebuildResult = {
      projections: this.targets.map((t) => ({ name: t.projection.name, generation: t.generation, tableName: t.table, position: t.position })),
      events: this.events,
      durationMs,
      eventsPerSecond: this.events / Math.max(durationMs / 1000, 1e-3),
    };
    this.logger.info(
      { projections: result.projections.map((p) => `${p.name}:${p.tableName}`), events: result.events, ms: Math.round(durationMs) },
      'rebuild switched over',
    );
    return result;
  }

  /**
   * Replays pages until one comes back short (caught up with the log as it was a moment ago), or
   * an index build has failed.
   * Pipelined: while one page's rows are written, the next page is read, opened and projected
   * over the rows that write is changing (kept in memory) and those already committed (loaded),
   * so JavaScript and PostgreSQL work at the same time. Writes stay one at a time and in order,
   * each with the rebuild checkpoints of the targets it writes; a failed one restarts from the
   * last committed page of each. A projection of hot rows is written every HOT_ROWS_PAGES pages
   * and when the replay ends (carried-rows.ts): until then its checkpoint stays where it was.
   */
  private replay(): Promise<Position> {
    return this.withRetries(() => this.replayOnce());
  }

  private async replayOnce(): Promise<Position> {
    let position = this.targets.map((t) => t.position).reduce((a, b) => (comparePositions(a, b) <= 0 ? a : b));
    /** How far each target has been projected: committed, in the write in flight, or held (hot rows). */
    const projected = new Map(this.targets.map((t) => [t, t.position]));
    const carried = new Map(this.targets.map((t) => [t, new CarriedRows(t.projection.hotRows === true ? HOT_ROWS_HELD : 0)]));
    // Assigned in send(), a closure, which TypeScript's narrowing does not see: typed by hand.
    let writing = null as Promise<void> | null;
    let reading: Promise<Page> | null = null;
    const loader = (await this.deps.knex.client.acquireConnection()) as pg.ClientBase;
    /** Sends the carried changes of `targets` with their checkpoints at `last`, once the write before has committed. */
    const send = async (targets: readonly Target[], last: Position) => {
      const prepared: PreparedChanges[] = [];
      for (const target of targets) {
        const { changes, isStored, span } = carried.get(target)!.take();
        prepared.push(await this.writer.prepareBulk(loader, target.projection, target.table, changes, span ?? NO_EVENTS, isStored));
      }
      if (writing) await writing; // the previous write is committed before this one is sent
      writing = this.savePage(prepared, targets, last).then(() => {
        for (const target of targets) target.position = last;
      });
      writing.catch(() => undefined); // awaited on the next turn or below
    };
    try {
      for (;;) {
        this.throwIfAborted();
        // The rebuild cannot switch over without its indexes: it fails where the build is awaited.
        if (this.indexingFailed) break;
        const { events: page, guestKeys } = await (reading ?? this.readPage(position));
        reading = null;
        if (page.length === 0) break;
        const full = page.length === this.batchSize;
        if (full) {
          reading = this.readPage(page.at(-1)!.position); // the next page, while this one is worked on
          reading.catch(() => undefined); // awaited (and its error thrown) on the next turn
        }
        const last = page.at(-1)!.position;
        const behind = this.targets.filter((t) => comparePositions(last, projected.get(t)!) > 0);
        const opened = openGuestDataWith(
          page,
          guestKeys && behind.some((t) => t.projection.opensGuestData) ? await guestKeys : null,
          this.deps.contactHasher,
        );
        for (const target of behind) {
          const from = projected.get(target)!;
          const unseen = eventsAfter(opened, from);
          const rows = carried.get(target)!;
          const keys = keysOf(target.projection, unseen);
          // The rebuild is the table's only writer: the rows it holds are the rows' latest state.
          const missing = rows.missing(keys);
          rows.addLoaded(missing, await this.writer.load(loader, target.projection, target.table, missing, unseen));
          const changes = projectBatch(target.projection, rows.rowsOf(keys), unseen);
          rows.change(changes, target.projection.keyColumn, { first: unseen[0]!.id, last: unseen.at(-1)!.id });
          projected.set(target, last);
        }
        const due = behind.filter((t) => !full || t.projection.hotRows !== true || carried.get(t)!.pagesHeld >= HOT_ROWS_PAGES);
        if (due.length > 0) await send(due, last);
        this.count(page);
        position = last;
        void this.refreshHead(false).catch(() => undefined);
        this.report('replaying', position);
        if ((positionFraction(START, position, this.head) ?? 1) >= INDEXES_FROM) void this.startIndexes();
        if (!full) break;
      }
      // Caught up (after a full page, the next one was empty), or the index build failed: hot
      // rows still held are written now, so that no resume has to replay them again.
      const held = this.targets.filter((t) => carried.get(t)!.pagesHeld > 0);
      if (held.length > 0) await send(held, position);
      if (writing) await writing;
    } catch (error) {
      // Let a write in flight settle before a retry reads the committed positions.
      if (writing) await writing.catch(() => undefined);
      throw error;
    } finally {
      await this.deps.knex.client.releaseConnection(loader);
    }
    return position;
  }

  /** The changes of `targets` (a page's, or a few pages' for hot rows) with their rebuild checkpoints, in one transaction (page-writer.ts). */
  private async savePage(prepared: readonly PreparedChanges[], targets: readonly Target[], last: Position): Promise<void> {
    this.pageWriter ??= new PageWriter(connectionStringOf(this.deps.knex));
    try {
      await this.pageWriter.write({ changes: prepared, projections: targets.map((t) => t.projection.name), last });
    } catch (error) {
      await this.closePageWriter(); // a retry starts on a new connection
      throw error;
    }
  }

  private async closePageWriter(): Promise<void> {
    const writer = this.pageWriter;
    this.pageWriter = null;
    await writer?.close();
  }

  /** Starts the secondary index builds once (an error ends the replay, and is thrown where awaited after it). */
  private startIndexes(): Promise<void> {
    if (!this.indexing) {
      this.indexing = this.withRetries(() => this.buildIndexes());
      this.indexing.catch(() => (this.indexingFailed = true));
    }
    return this.indexing;
  }

  /** Every target's secondary indexes, one build at a time (see createIndexes); an abort stops between builds. */
  private async buildIndexes(): Promise<void> {
    for (const target of this.targets.filter((t) => !t.indexed)) {
      await createIndexes(this.deps.knex, target.projection, target.table, () => this.throwIfAborted());
      await this.deps.knex.raw('UPDATE projection_rebuilds SET indexed = true, updated_at = now() WHERE name = ?', [target.projection.name]);
      target.indexed = true;
    }
  }

  /**
   * One transaction: lock the live checkpoints (serialising with the runner's batches), apply
   * whatever arrived since the replay caught up, repoint the views and move the checkpoints.
   * Returns the previous generation tables, to drop once committed.
   */
  private async switchOver(): Promise<string[]> {
    const { old, reached, events } = await inTransaction(this.deps.knex, async (client) => {
      const names = this.targets.map((t) => t.projection.name);
      const { rows } = await client.query<CheckpointRecord>(
        `SELECT ${CHECKPOINT_COLUMNS} FROM projection_checkpoints WHERE name = ANY($1) ORDER BY name FOR UPDATE`,
        [names],
      );
      await client.query('SELECT 1 FROM projection_rebuilds WHERE name = ANY($1) ORDER BY name FOR UPDATE', [names]);
      const reached = new Map(this.targets.map((t) => [t, t.position]));
      let position = this.targets.map((t) => t.position).reduce((a, b) => (comparePositions(a, b) <= 0 ? a : b));
      let events = 0;
      for (;;) {
        const page = await this.read(position);
        if (page.length === 0) break;
        for (const [target, p] of await this.applyPage(client, page, reached)) reached.set(target, p);
        position = page.at(-1)!.position;
        events += page.length;
      }
      const old: string[] = [];
      for (const target of this.targets) {
        const live = toCheckpoint(rows.find((r) => r.name === target.projection.name)!);
        const at = reached.get(target)!;
        await pointView(client, target.projection.name, target.table);
        // The rebuild has read everything visible now, so it is at or past the runner's position.
        // Were it ever behind, the runner would find the checkpoint behind its batch and re-read.
        await client.query(
          `UPDATE projection_checkpoints SET generation = $2, table_name = $3, version = $4, position_commit = $5,
             position_prepare = $6, error = NULL, updated_at = now() WHERE name = $1`,
          [target.projection.name, target.generation, target.table, target.projection.version, at.commit.toString(), at.prepare.toString()],
        );
        await client.query('DELETE FROM projection_rebuilds WHERE name = $1', [target.projection.name]);
        if (live.tableName !== target.table) old.push(live.tableName);
      }
      // Every read model now counts in this store: it is the one the checkpoints count in.
      if (this.adopt !== null) await adoptCheckpointStore(client, this.adopt);
      await client.query('SELECT pg_notify($1, $2)', [
        PROGRESS_CHANNEL,
        encodeProgress(this.targets.map((t) => ({ name: t.projection.name, position: reached.get(t)! }))),
      ]);
      // The views now show other tables: whatever a process cached from them is to be read again.
      await client.query('SELECT pg_notify($1, $2)', [ROWS_CHANGED_CHANNEL, names.join(' ')]);
      return { old, reached, events };
    });
    this.events += events;
    for (const [target, p] of reached) target.position = p;
    return old;
  }

  /** Applies a page, in the caller's transaction, to every target that has not seen it; returns where each got to. */
  private async applyPage(
    client: pg.ClientBase,
    page: readonly RecordedEvent[],
    positions: ReadonlyMap<Target, Position>,
  ): Promise<Map<Target, Position>> {
    const last = page.at(-1)!.position;
    const behind = this.targets.filter((t) => comparePositions(last, positions.get(t)!) > 0);
    const opened = await openGuestData(page, this.deps.subjectKeys, {
      open: behind.some((t) => t.projection.opensGuestData),
      contactHasher: this.deps.contactHasher,
    });
    const moved = new Map<Target, Position>();
    for (const target of behind) {
      const from = positions.get(target)!;
      await this.writer.write(client, target.projection, target.table, eventsAfter(opened, from));
      moved.set(target, last);
    }
    return moved;
  }

  /** A page with its guest keys fetched as soon as it is read: the key query overlaps the work on the page before. */
  private async readPage(after: Position): Promise<Page> {
    const events = await this.read(after);
    const guestKeys = this.targets.some((t) => t.projection.opensGuestData) ? guestKeysOf(events, this.deps.subjectKeys) : null;
    guestKeys?.catch(() => undefined); // awaited when the page is opened
    return { events, guestKeys };
  }

  private read(after: Position): Promise<RecordedEvent[]> {
    return this.deps.store.readAll({ after, maxCount: this.batchSize });
  }

  private async withRetries<T>(work: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await work();
      } catch (error) {
        if (isDeterministic(error) || attempt >= PAGE_RETRIES || this.options.signal?.aborted) throw error;
        const delay = 200 * 2 ** attempt;
        this.logger.warn({ err: error, attempt, retryInMs: delay }, `rebuild step failed: ${errorMessage(error)}; retrying`);
        await new Promise((r) => setTimeout(r, delay));
        this.throwIfAborted();
      }
    }
  }

  /** Waits briefly for readers still on the old table; on failure the next rebuild drops it. */
  private async dropOld(table: string): Promise<void> {
    for (let attempt = 1; attempt <= 3; attempt++) {
      try {
        await this.deps.knex.transaction(async (trx) => {
          await trx.raw("SET LOCAL lock_timeout = '5s'");
          await trx.raw('DROP TABLE IF EXISTS ??', [table]);
        });
        return;
      } catch (error) {
        this.logger.warn({ err: error, table, attempt }, 'could not drop the previous generation table yet');
      }
    }
  }

  private async refreshHead(force: boolean): Promise<void> {
    const now = performance.now();
    if (!force && now - this.headReadAt < 2000) return;
    this.headReadAt = now;
    this.head = await this.deps.store.headPosition();
  }

  private report(phase: RebuildPhase, position: Position): void {
    if (!this.options.onProgress) return;
    const elapsedMs = performance.now() - this.startedAt;
    const fraction = phase === 'done' ? 1 : positionFraction(this.from, position, this.head);
    try {
      this.options.onProgress({
        projections: this.targets.map((t) => t.projection.name),
        phase,
        events: this.events,
        position,
        head: this.head,
        fraction,
        elapsedMs,
        eventsPerSecond: this.events / Math.max(elapsedMs / 1000, 1e-3),
      });
    } catch {
      // a progress display must not break the rebuild
    }
  }

  /** Counts the page's events not counted before. */
  private count(page: readonly RecordedEvent[]): void {
    const last = page.at(-1)!.position;
    if (comparePositions(last, this.counted) <= 0) return;
    this.events += eventsAfter(page, this.counted).length;
    this.counted = last;
  }

  private throwIfAborted(): void {
    if (this.options.signal?.aborted) throw new RebuildStopped();
  }
}

/**
 * How far `at` is from `from` towards `head`, 0..1, along the prepare position: the one part of a
 * position that grows with the log in both stores (the PostgreSQL log's global sequence, about one
 * per event; EventStoreDB's byte offset in its log). Null when there is nothing between from and
 * head. A share of the log by position, never a count of events.
 */
export function positionFraction(from: Position, at: Position, head: Position): number | null {
  const span = head.prepare - from.prepare;
  if (span <= 0n) return null;
  const done = at.prepare - from.prepare;
  if (done <= 0n) return 0;
  if (done >= span) return 1;
  // Exact in bigint to a millionth, whatever the size of the positions.
  return Number((done * 1_000_000n) / span) / 1_000_000;
}

/** The events of a page after `position`. A page is in log order: when its first event is after it, every one is. */
function eventsAfter<E extends { readonly position: Position }>(page: readonly E[], position: Position): readonly E[] {
  return comparePositions(page[0]!.position, position) > 0 ? page : page.filter((e) => comparePositions(e.position, position) > 0);
}
