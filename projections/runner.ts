// The projection runner: follows the event store's global order and keeps every read model
// current. Per batch it opens guest data, then in ONE transaction locks the checkpoints, applies
// the events each projection has not seen into its current generation table, moves the
// checkpoints and NOTIFYs waiters. A crash before COMMIT loses the whole batch, rows and
// checkpoints together, so it is read again; after COMMIT it is never read again. Rows also carry
// the position of their last event, so even a repeated delivery changes nothing.
//
// The checkpoint rows are the source of truth, read FOR UPDATE in every batch: a blue/green
// rebuild (rebuild.ts) that switched a projection to a new table and position, or a second runner
// process, is noticed there, and events at or before the stored position are skipped. A stored
// position behind what this runner has read (reset by an operator) restarts the subscription
// from it. Transactional reactors (reactor.ts; pass delivery's scheduler) follow the same
// subscription with checkpoints of their own (forwarder_checkpoints), locked, checked and moved
// in the same transaction as the read models', their rows written in it too.
//
// One piece though past 600 lines: one class whose subscription, batch transaction, checkpoints,
// reactors and rebuild hand-over share its tracked projections and state; the parts that stand
// alone are modules of their own (projection-deps.ts, generation-tables.ts, table-writer.ts,
// reactor-checkpoints.ts, rebuild.ts).
import pg from 'pg';
import type { Logger } from '../shared/logger.js';
import { createLogger } from '../shared/logger.js';
import {
  comparePositions,
  positionToString,
  START,
  type Position,
  type RecordedEvent,
  type Subscription,
} from '../shared/event-store/event-store.js';
import { keysOf, PoisonEventError, projectBatch, SEALED_EVENT_TYPES, type AnyProjection, type ProjectionEvent, type StoredRow } from './projection.js';
import { ALL_PROJECTIONS } from './all-projections.js';
import { CHECKPOINT_COLUMNS, ensureReadModels, toCheckpoint, type Checkpoint, type CheckpointRecord } from './generation-tables.js';
import { GuestDataError, openGuestData } from './guest-data.js';
import { arrayLiteral, ProjectionWriteError, rowsByKey, TableWriter } from './table-writer.js';
import { encodeProgress, PROGRESS_CHANNEL, ROWS_CHANGED_CHANNEL, type ProjectionProgress } from './progress-channel.js';
import { CheckpointMissing, errorMessage, isDeterministic } from './errors.js';
import { rebuildProjections } from './rebuild.js';
import { requireCheckpointStore } from './checkpoint-store-identity.js';
import { InvalidEventError } from '../shared/event-store/validating-event-store.js';
import type { TransactionalReactor } from './reactor.js';
import { lockReactorCheckpointsStatement, reactorCheckpointStatement, reactorPositions, readReactorCheckpoint } from './reactor-checkpoints.js';
import { passDeliveryScheduler } from './pass-delivery-reactor.js';
import type { ProjectionDeps } from './projection-deps.js';



export interface RunnerOptions {
  /** Default: every read-model projection. */
  readonly projections?: readonly AnyProjection[];
  /** Reactors hosted in the batches' transactions. Default: pass delivery's scheduler. */
  readonly reactors?: readonly TransactionalReactor[];
  /** Events per subscription batch (and so per transaction). */
  readonly batchSize?: number;
  /** Rebuild, in the background, projections whose stored version is not the code's (default true). */
  readonly rebuildStale?: boolean;
  /** How long batches no projection handles may go uncommitted (default 250 ms). */
  readonly irrelevantCheckpointIntervalMs?: number;
  /** Called after each batch with the projections it moved (the in-process fast path). */
  readonly onProgress?: (progress: readonly ProjectionProgress[]) => void;
  /** Called right after a batch commits with the projections whose rows it changed. */
  readonly onRowsChanged?: (projections: readonly string[]) => void;
  readonly retry?: { readonly initialMs?: number; readonly maxMs?: number };
  /** Test seam: runs inside each batch's transaction just before COMMIT; throwing aborts the batch. */
  readonly beforeCommit?: (batch: { readonly number: number; readonly events: readonly RecordedEvent[] }, client: pg.ClientBase) => unknown;
}

export type ProjectionState = 'live' | 'rebuilding' | 'failed';

export interface TrackedProjection {
  readonly name: string;
  readonly state: ProjectionState;
  /** Last position committed for it, as this runner knows it. */
  readonly position: Position;
  readonly error: string | null;
}

interface Tracked {
  projection: AnyProjection;
  state: ProjectionState;
  /** The generation table its last batch wrote (null until one has). */
  tableName: string | null;
  position: Position;
  error: string | null;
}

interface HostedReactor {
  readonly reactor: TransactionalReactor;
  state: 'live' | 'failed';
  /** Last position committed for it, as this runner knows it. */
  position: Position;
}

/** Ends the current subscription so the runner starts another from the stored checkpoints. */
class Resubscribe extends Error {
  override readonly name = 'Resubscribe';
}
/** Ends a subscription because the runner stops or has replaced it. */
class Stopped extends Error {
  override readonly name = 'Stopped';
}

const DEFAULT_BATCH_SIZE = 1000;
/**
 * A batch no live projection handles (token rotations, codes, sessions: most of the log under
 * sign-in load) changes no row, so it skips the transaction and only moves the positions in
 * memory; the stored checkpoints catch up with the next committed batch, at least this often.
 * A crash before then re-reads those events, which changes nothing either.
 */
const DEFAULT_IRRELEVANT_CHECKPOINT_INTERVAL_MS = 250;

export class ProjectionRunner {
  private readonly projections: readonly AnyProjection[];
  private readonly reactors: readonly HostedReactor[];
  private readonly logger: Logger;
  private readonly writer = new TableWriter();
  private readonly tracked = new Map<string, Tracked>();
  private readonly abort = new AbortController();
  private subscription: Subscription | null = null;
  /** Bumped per subscription, so a replaced one's late batch is refused. */
  private subscriptionId = 0;
  /** The position the current subscription has delivered up to (its batches follow it). */
  private after: Position | null = null;
  /** Set while batches were skipped without a commit: the stored checkpoints are at least this. */
  private storedAtLeast: Position | null = null;
  private lastCommitAt = 0;
  private batches = 0;
  /** Set after a failed multi-projection write: the next attempt writes projection by projection. */
  private writeSeparately = false;
  private subscriptionFailures = 0;
  private restartTimer: NodeJS.Timeout | null = null;
  private readonly background = new Set<Promise<void>>();
  private started = false;
  private stopping = false;

  constructor(
    private readonly deps: ProjectionDeps,
    private readonly options: RunnerOptions = {},
  ) {
    this.projections = options.projections ?? ALL_PROJECTIONS;
    this.reactors = (options.reactors ?? [passDeliveryScheduler]).map((reactor) => ({ reactor, state: 'live', position: START }));
    this.logger = deps.logger ?? createLogger(process.env.LOG_LEVEL ?? 'info', 'projections');
  }

  /**
   * Creates missing read models, then follows the store from the checkpoints. Resolves once
   * following; throws EventStoreMismatch when the checkpoints count in another event store.
   */
  async start(): Promise<void> {
    if (this.started) throw new Error('the projection runner is already started');
    this.started = true;
    // Checkpoints of another event store's log would skip or repeat events here: refuse to start.
    await requireCheckpointStore(this.deps.knex, this.deps.store, this.logger);
    const stale = new Set((await ensureReadModels(this.deps.knex, this.projections)).map((p) => p.name));
    const checkpoints = await this.readCheckpoints();
    for (const hosted of this.reactors) hosted.position = (await readReactorCheckpoint(this.deps.knex, hosted.reactor.name)).position;
    for (const projection of this.projections) {
      const checkpoint = checkpoints.get(projection.name)!;
      this.tracked.set(projection.name, {
        projection,
        state: stale.has(projection.name) ? 'rebuilding' : 'live',
        tableName: null,
        position: checkpoint.position,
        error: null,
      });
    }
    this.subscribe();
    if (stale.size > 0) this.rebuildInBackground([...stale].map((name) => this.tracked.get(name)!), checkpoints);
  }

  /** Stops following; a batch in flight finishes or rolls back first. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.abort.abort();
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    const subscription = this.subscription;
    this.subscription = null;
    this.subscriptionId++;
    await subscription?.stop();
    await Promise.allSettled([...this.background]);
  }

  /** Each projection's state as this runner sees it. */
  status(): TrackedProjection[] {
    return [...this.tracked.values()].map((t) => ({ name: t.projection.name, state: t.state, position: t.position, error: t.error }));
  }

  // --- following -------------------------------------------------------------------------------

  private subscribe(): void {
    if (this.stopping || this.subscription) return;
    const live = this.live();
    const reactors = this.liveReactors();
    if (live.length === 0 && reactors.length === 0) return;
    if (this.storedAtLeast) {
      // Skipped batches moved the positions past the stored checkpoints: follow again from where
      // those are known to be (re-reading only events no projection handles).
      for (const t of [...live, ...reactors]) if (comparePositions(t.position, this.storedAtLeast) > 0) t.position = this.storedAtLeast;
      this.storedAtLeast = null;
    }
    const after = [...live, ...reactors].map((t) => t.position).reduce((a, b) => (comparePositions(a, b) <= 0 ? a : b));
    const id = ++this.subscriptionId;
    this.after = after;
    this.logger.info(
      { after: positionToString(after), projections: live.map((t) => t.projection.name), reactors: reactors.map((r) => r.reactor.name) },
      'projections following the event store',
    );
    try {
      this.subscription = this.deps.store.subscribeToAll({
        after,
        batchSize: this.options.batchSize ?? DEFAULT_BATCH_SIZE,
        onEvents: (events) => this.onEvents(id, events),
        onError: (error) => this.onSubscriptionError(id, error),
      });
    } catch (error) {
      this.logger.error({ err: error }, 'projections cannot subscribe to the event store');
    }
  }

  private onSubscriptionError(id: number, error: unknown): void {
    if (error instanceof Stopped || id !== this.subscriptionId || this.stopping) return;
    if (error instanceof Resubscribe) {
      this.restartSubscription(0);
      return;
    }
    if (error instanceof InvalidEventError) {
      // No projection can read past it: stop them all, loudly, with the event named.
      const names = [...this.live().map((t) => t.projection.name), ...this.liveReactors().map((r) => r.reactor.name)];
      void this.fail(names, error).then(() => this.restartSubscription(0));
      return;
    }
    // A failed read. Some adapters retry it, others end the subscription: either way, start a
    // fresh one from the committed checkpoints after a pause, so following never silently stops.
    const delay = this.backoff(this.subscriptionFailures++);
    this.logger.warn({ err: error, retryInMs: delay }, 'event store subscription error; resubscribing');
    this.restartSubscription(delay);
  }

  private restartSubscription(delayMs: number): void {
    const ended = this.subscription;
    this.subscription = null;
    this.subscriptionId++; // a late batch of the ended subscription is refused
    // Possibly called from the ending subscription's own loop: let it finish rather than wait here.
    void ended?.stop().catch(() => undefined);
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      this.subscribe();
    }, delayMs);
  }

  /**
   * One delivered batch. Never throws for a failure it can wait out: it retries with backoff until
   * the batch commits or the runner stops, because the subscription would otherwise move past it.
   */
  private async onEvents(id: number, events: readonly RecordedEvent[]): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      if (id !== this.subscriptionId || this.stopping) throw new Stopped();
      try {
        await this.processBatch(events);
        this.after = events.at(-1)?.position ?? this.after;
        this.subscriptionFailures = 0;
        return;
      } catch (error) {
        if (error instanceof Resubscribe) throw error;
        const stoppedNames = this.poisoned(error);
        if (stoppedNames.length > 0) {
          await this.fail(stoppedNames, error);
          attempt = -1; // the others go on with this batch at once
          continue;
        }
        const delay = this.backoff(attempt);
        this.logger.warn({ err: error, attempt: attempt + 1, retryInMs: delay }, 'projection batch failed; retrying');
        await sleep(delay, this.abort.signal).catch(() => {
          throw new Stopped();
        });
      }
    }
  }

  private async processBatch(events: readonly RecordedEvent[]): Promise<void> {
    const live = this.live().sort((a, b) => (a.projection.name < b.projection.name ? -1 : 1));
    const reactors = this.liveReactors();
    const last = events.at(-1)?.position;
    const after = this.after;
    if ((live.length === 0 && reactors.length === 0) || !last || !after) return;
    const handled = events.some(
      (e) => live.some((t) => (t.projection.handles as readonly string[]).includes(e.type)) || reactors.some((r) => r.reactor.handles.includes(e.type)),
    );
    const interval = this.options.irrelevantCheckpointIntervalMs ?? DEFAULT_IRRELEVANT_CHECKPOINT_INTERVAL_MS;
    if (!handled && Date.now() - this.lastCommitAt < interval) {
      this.storedAtLeast ??= after;
      const moved = live.filter((t) => comparePositions(last, t.position) > 0).map((t) => ({ name: t.projection.name, position: last }));
      for (const t of [...live, ...reactors]) if (comparePositions(last, t.position) > 0) t.position = last;
      this.reportProgress(moved);
      return;
    }
    const opensGuests = live.some((t) => t.projection.opensGuestData && t.projection.handles.some((h) => SEALED_EVENT_TYPES.has(h)));
    // Outside the transaction: the key store is another round trip that needs no row lock.
    const opened = await openGuestData(events, this.deps.subjectKeys, { open: opensGuests, contactHasher: this.deps.contactHasher });
    const number = ++this.batches;

    const outcome = await this.commitBatch(live, reactors, opened, last, after, number, events);
    if (outcome.changed.length > 0) this.notifyListener(() => this.options.onRowsChanged?.(outcome.changed));
    this.storedAtLeast = null;
    this.lastCommitAt = Date.now();
    for (const [name, position] of outcome.reached) this.tracked.get(name)!.position = position;
    for (const [hosted, position] of outcome.reactorsReached) hosted.position = position;
    for (const committed of outcome.reactorsCommitted) this.notifyListener(committed);
    for (const { tracked, version } of outcome.versionChanged) {
      // Another process rebuilt it with other code: applying this code's rows to that table would mix versions.
      await this.fail(
        [tracked.projection.name],
        new Error(`stored version ${version} differs from this runner's ${tracked.projection.version}: rebuilt by another process`),
      );
    }
    this.reportProgress(outcome.moved);
  }

  /**
   * The batch's transaction in two round trips, each one multi-statement query with its values
   * inlined (the simple protocol takes no parameters): BEGIN, the checkpoint locks and the loads
   * of the rows the batch touches; then every projection's writes, the checkpoint move with its
   * NOTIFY, and COMMIT. A projection whose table changed since the last batch (a rebuild switched
   * it) is loaded again in a round trip of its own. After a failed write the next attempt writes
   * each projection in a statement of its own, so a failure names the projection it belongs to.
   * Hosted reactors ride along: their checkpoints are locked in the first round trip, their rows
   * and checkpoint moves go with the projections' writes.
   */
  private async commitBatch(
    live: readonly Tracked[],
    reactors: readonly HostedReactor[],
    opened: readonly ProjectionEvent[],
    last: Position,
    after: Position,
    number: number,
    events: readonly RecordedEvent[],
  ): Promise<{
    reached: Map<string, Position>;
    moved: ProjectionProgress[];
    versionChanged: Array<{ tracked: Tracked; version: number }>;
    changed: string[];
    reactorsReached: Map<HostedReactor, Position>;
    reactorsCommitted: Array<() => void>;
  }> {
    const knex = this.deps.knex;
    const client = (await knex.client.acquireConnection()) as pg.ClientBase;
    let open = false;
    try {
      const keys = live.map((t) => keysOf(t.projection, opened));
      // Loaded together with the locks from the table each projection wrote last time.
      const guessed = live.map((t, i) => (t.tableName !== null && keys[i]!.length > 0 ? t.tableName : null));
      const names = arrayLiteral(live.map((t) => t.projection.name));
      open = true;
      const first = (await client
        .query(
          [
            // A lost commit after a server crash loses rows and checkpoint together and is simply
            // projected again, so durability can wait for the next WAL flush: much cheaper per batch.
            'BEGIN',
            'SET LOCAL synchronous_commit = off',
            `SELECT ${CHECKPOINT_COLUMNS} FROM projection_checkpoints WHERE name = ANY(${names}) ORDER BY name FOR UPDATE`,
            // Always a result, so the loads' results keep their places.
            reactors.length > 0 ? lockReactorCheckpointsStatement(reactors.map((r) => r.reactor.name)) : 'SELECT 1 WHERE false',
            ...live.flatMap((t, i) => (guessed[i] ? [this.writer.loadStatement(t.projection, guessed[i]!, keys[i]!)] : [])),
          ].join(';\n'),
        )
        .catch((error: unknown) => {
          // A guessed table may be gone (a rebuild switched away from it and dropped it): the
          // retry loads from the tables the checkpoints name instead of guessing again.
          for (const t of live) t.tableName = null;
          throw error;
        })) as unknown as pg.QueryResult[];
      const checkpoints = new Map((first[2]!.rows as CheckpointRecord[]).map((r) => [r.name, toCheckpoint(r)]));
      const reactorCheckpoints = reactorPositions(first[3]!.rows as Array<{ name: string; commit: string; prepare: string }>);
      let loadResult = 4;
      const reached = new Map<string, Position>();
      const moved: ProjectionProgress[] = [];
      const versionChanged: Array<{ tracked: Tracked; version: number }> = [];
      const statements: string[] = [];
      const separately: Array<{ projection: string; statements: string[] }> = [];
      for (const [i, t] of live.entries()) {
        const name = t.projection.name;
        const loadedRows = guessed[i] ? (first[loadResult++]!.rows as StoredRow[]) : null;
        const checkpoint = checkpoints.get(name);
        if (!checkpoint) throw new CheckpointMissing(name);
        t.tableName = checkpoint.tableName;
        if (checkpoint.version !== t.projection.version) {
          versionChanged.push({ tracked: t, version: checkpoint.version });
          continue;
        }
        if (comparePositions(checkpoint.position, this.storedAtLeast ?? after) < 0) {
          // Someone moved the checkpoint back: events between it and this batch were never read.
          t.position = checkpoint.position;
          throw new Resubscribe(`checkpoint of ${name} moved back to ${positionToString(checkpoint.position)}`);
        }
        const unseen = opened.filter((e) => comparePositions(e.position, checkpoint.position) > 0);
        if (unseen.length > 0 && keys[i]!.length > 0) {
          const loaded =
            loadedRows && guessed[i] === checkpoint.tableName
              ? rowsByKey(t.projection, loadedRows)
              : await this.writer.load(client, t.projection, checkpoint.tableName, keys[i]!, unseen);
          const changes = projectBatch(t.projection, loaded, unseen);
          const own = await this.writer.saveStatements(client, this.writer.prepare(t.projection, checkpoint.tableName, changes, unseen));
          statements.push(...own);
          separately.push({ projection: name, statements: own });
        }
        if (comparePositions(last, checkpoint.position) > 0) {
          moved.push({ name, position: last });
          reached.set(name, last);
        } else {
          reached.set(name, checkpoint.position); // a rebuild already switched it further
        }
      }
      const reactorsReached = new Map<HostedReactor, Position>();
      const reactorsCommitted: Array<() => void> = [];
      for (const hosted of reactors) {
        const name = hosted.reactor.name;
        // No row yet: a first start, or deleted by an operator to replay the log for it.
        const stored = reactorCheckpoints.get(name) ?? START;
        if (comparePositions(stored, this.storedAtLeast ?? after) < 0) {
          hosted.position = stored;
          throw new Resubscribe(`checkpoint of reactor ${name} moved back to ${positionToString(stored)}`);
        }
        if (comparePositions(last, stored) <= 0) {
          reactorsReached.set(hosted, stored); // another runner already did these
          continue;
        }
        const unseen = events.filter((e) => comparePositions(e.position, stored) > 0 && hosted.reactor.handles.includes(e.type));
        const { statements: own, acted, committed } = unseen.length > 0 ? hosted.reactor.statements(unseen) : { statements: [], acted: 0, committed: undefined };
        if (committed) reactorsCommitted.push(committed);
        const all = [...own, reactorCheckpointStatement(name, last, acted)];
        statements.push(...all);
        separately.push({ projection: name, statements: all });
        reactorsReached.set(hosted, last);
      }
      if (this.writeSeparately) {
        for (const { projection, statements: own } of separately) {
          await client.query(own.join(';\n')).catch((error: unknown) => {
            throw new ProjectionWriteError(projection, events[0]?.id ?? '-', events.at(-1)?.id ?? '-', error);
          });
        }
        statements.length = 0;
      }
      if (moved.length > 0) {
        // Every moved checkpoint goes to the batch's last position; one statement moves them and notifies.
        const movedNames = arrayLiteral(moved.map((m) => m.name));
        statements.push(
          `WITH moved AS (
             UPDATE projection_checkpoints SET position_commit = '${last.commit}', position_prepare = '${last.prepare}',
                    error = NULL, updated_at = now()
             WHERE name = ANY(${movedNames})
           )
           SELECT pg_notify(${pg.escapeLiteral(PROGRESS_CHANNEL)}, ${pg.escapeLiteral(encodeProgress(moved))})`,
        );
      }
      const reactorNames = new Set(reactors.map((r) => r.reactor.name));
      const changed = separately.map((s) => s.projection).filter((name) => !reactorNames.has(name));
      if (changed.length > 0) {
        statements.push(`SELECT pg_notify(${pg.escapeLiteral(ROWS_CHANGED_CHANNEL)}, ${pg.escapeLiteral(changed.join(' '))})`);
      }
      const hook = this.options.beforeCommit;
      if (!hook) statements.push('COMMIT');
      try {
        if (statements.length > 0) await client.query(statements.join(';\n'));
      } catch (error) {
        // Which projection's statement failed is not told by a multi-statement query.
        if (separately.length > 0) this.writeSeparately = true;
        throw error;
      }
      if (hook) {
        await hook({ number, events }, client);
        await client.query('COMMIT');
      }
      open = false;
      this.writeSeparately = false;
      return { reached, moved, versionChanged, changed, reactorsReached, reactorsCommitted };
    } finally {
      if (open) await client.query('ROLLBACK').catch(() => undefined);
      await knex.client.releaseConnection(client);
    }
  }

  private reportProgress(moved: readonly ProjectionProgress[]): void {
    if (moved.length > 0) this.notifyListener(() => this.options.onProgress?.(moved));
  }

  private notifyListener(call: () => void): void {
    try {
      call();
    } catch (error) {
      this.logger.warn({ err: error }, 'projection progress listener failed');
    }
  }

  /** The projections an error stops for good (until restarted): poison, not transient. */
  private poisoned(error: unknown): string[] {
    if (!isDeterministic(error)) return [];
    if (error instanceof PoisonEventError || error instanceof ProjectionWriteError) return [error.projection];
    if (error instanceof CheckpointMissing) return [error.projection];
    if (error instanceof GuestDataError) {
      return this.live()
        .filter((t) => t.projection.opensGuestData)
        .map((t) => t.projection.name);
    }
    // A deterministic error outside any one projection's work (the checkpoint table itself):
    // nothing to single out, so it is retried with backoff and logged each time.
    return [];
  }

  private async fail(names: readonly string[], error: unknown): Promise<void> {
    const message = errorMessage(error);
    for (const name of names) {
      const hosted = this.reactors.find((r) => r.reactor.name === name);
      if (hosted) {
        if (hosted.state === 'failed') continue;
        hosted.state = 'failed';
        // Until restarted (after a fix); the checkpoint row keeps where it stopped.
        this.logger.error({ err: error, reactor: name, position: positionToString(hosted.position) }, `reactor ${name} STOPPED: ${message}`);
        continue;
      }
      const t = this.tracked.get(name);
      if (!t || t.state === 'failed') continue;
      t.state = 'failed';
      t.error = message;
      this.logger.error(
        {
          err: error,
          projection: name,
          eventId:
            error instanceof PoisonEventError || error instanceof GuestDataError || error instanceof InvalidEventError ? error.eventId : undefined,
          position: positionToString(t.position),
        },
        `projection ${name} STOPPED: ${message}`,
      );
      // Recorded for `projections status`; the next runner start tries again (after a fix).
      await this.deps.knex
        .raw('UPDATE projection_checkpoints SET error = ?, updated_at = now() WHERE name = ?', [message.slice(0, 2000), name])
        .catch((e: unknown) => this.logger.warn({ err: e, projection: name }, 'could not record the projection error'));
    }
  }

  // --- stale versions --------------------------------------------------------------------------

  /** Rebuilds the projections stored at another version, together: one pass over the log, one rebuild's connections. */
  private rebuildInBackground(stale: readonly Tracked[], stored: ReadonlyMap<string, Checkpoint>): void {
    const names = stale.map((t) => t.projection.name);
    if (this.options.rebuildStale === false) {
      for (const t of stale) {
        const name = t.projection.name;
        void this.fail([name], new Error(`stored version ${stored.get(name)!.version} differs from the code's ${t.projection.version}; run \`guestpass projections rebuild ${name}\``));
      }
      return;
    }
    for (const t of stale) {
      const name = t.projection.name;
      this.logger.warn({ projection: name, storedVersion: stored.get(name)!.version, version: t.projection.version }, 'projection version changed; rebuilding it');
    }
    const run = rebuildProjections(names, { ...this.deps, logger: this.logger }, { projections: this.projections, signal: this.abort.signal })
      .then(async () => {
        if (this.stopping) return;
        const checkpoints = await this.readCheckpoints();
        for (const t of stale) {
          t.position = checkpoints.get(t.projection.name)!.position;
          t.state = 'live';
        }
        // The running subscription may already be past the rebuilt checkpoint (it kept feeding the
        // others meanwhile). It would notice at its next batch, but on a quiet log that can be
        // never: follow again from the committed checkpoints now. Nothing is applied twice, since
        // every batch skips what a projection's checkpoint already covers.
        if (this.subscription) this.restartSubscription(0);
        else this.subscribe();
      })
      .catch(async (error: unknown) => {
        if (!this.stopping) await this.fail(names, error);
      })
      .finally(() => this.background.delete(run));
    this.background.add(run);
  }

  // --- helpers ---------------------------------------------------------------------------------

  private live(): Tracked[] {
    return [...this.tracked.values()].filter((t) => t.state === 'live');
  }

  private liveReactors(): HostedReactor[] {
    return this.reactors.filter((r) => r.state === 'live');
  }

  private async readCheckpoints() {
    const { rows } = await this.deps.knex.raw<{ rows: CheckpointRecord[] }>(
      `SELECT ${CHECKPOINT_COLUMNS} FROM projection_checkpoints WHERE name IN (${this.projections.map(() => '?').join(', ')})`,
      this.projections.map((p) => p.name),
    );
    return new Map(rows.map((r) => [r.name, toCheckpoint(r)]));
  }

  private backoff(attempt: number): number {
    const initial = this.options.retry?.initialMs ?? 100;
    const max = this.options.retry?.maxMs ?? 30_000;
    const base = Math.min(max, initial * 2 ** Math.min(attempt, 20));
    return Math.round(base / 2 + (Math.random() * base) / 2); // jitter: restarted processes do not retry in step
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Error('aborted'));
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new Error('aborted'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
