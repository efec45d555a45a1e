// Read-your-writes for the command side: a write answers once the projections serving the next
// read have reached its position. One LISTEN connection per process (not per waiter) hears the
// runner's NOTIFY after each committed batch and keeps the highest position known per
// projection; waiters are answered from that map. The checkpoint table is read once when the
// LISTEN connection is (re)made, so nothing committed before it is missed, and polled slowly
// while anyone waits, in case notifications stop. A runner in the same process can also report
// its commits directly (observe), which skips the round trip through the server.
import type { Knex } from 'knex';
import type pg from 'pg';
import type { Logger } from '../shared/logger.js';
import type { ReadModelWatermark } from '../shared/read-model-watermark.js';
import { comparePositions, START, type Position } from '../shared/event-store/event-store.js';
import { decodeProgress, PROGRESS_CHANNEL, ROWS_CHANGED_CHANNEL, type ProjectionProgress } from './progress-channel.js';
import type { ReadModelChanges } from '../shared/read-model-changes.js';

export interface WatermarkOptions {
  readonly logger?: Logger;
  /** How often the checkpoints are read while someone waits (the safety net under NOTIFY). */
  readonly pollIntervalMs?: number;
  /** Delay before making the LISTEN connection again after it broke. */
  readonly reconnectMs?: number;
}

interface Waiter {
  readonly position: Position;
  readonly names: readonly string[] | undefined;
  readonly resolve: (reached: boolean) => void;
}

export class PostgresReadModelWatermark implements ReadModelWatermark, ReadModelChanges {
  private readonly known = new Map<string, Position>();
  private readonly changeListeners = new Set<(projections: readonly string[] | null) => void>();
  private readonly waiters = new Set<Waiter>();
  private listener: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private pollTimer: NodeJS.Timeout | null = null;
  private refreshing: Promise<boolean> | null = null;
  private loaded = false;
  /** Listening, and the checkpoints were read after LISTEN took effect: every later commit is notified. */
  private hearsEveryCommit = false;
  private closed = false;

  constructor(
    private readonly knex: Knex,
    private readonly options: WatermarkOptions = {},
  ) {}

  async waitFor(position: Position, timeoutMs: number, projections?: readonly string[]): Promise<boolean> {
    if (comparePositions(position, START) <= 0) return true; // nothing was written
    if (this.loaded && this.reached(position, projections)) return true; // the common case: no I/O
    if (this.closed) return false;
    return new Promise<boolean>((resolve) => {
      let timer: NodeJS.Timeout | null = null;
      const waiter: Waiter = {
        position,
        names: projections,
        resolve: (reached) => {
          if (!this.waiters.delete(waiter)) return;
          if (timer) clearTimeout(timer);
          if (this.waiters.size === 0) this.stopPolling();
          resolve(reached);
        },
      };
      this.waiters.add(waiter);
      timer = setTimeout(() => waiter.resolve(false), Math.max(0, timeoutMs));
      this.ensureListening();
      this.startPolling();
      // Registered first, then read: a commit is either in this read or notified afterwards.
      // Once every commit is notified, the read would only repeat what the notifications said.
      if (!this.hearsEveryCommit) void this.refresh();
    });
  }

  /** In-process fast path: a runner in this process reports what it has committed. */
  observe(progress: readonly ProjectionProgress[]): void {
    this.advance(progress);
  }

  /** In-process fast path: a runner in this process reports the projections a commit changed. */
  observeRowsChanged(projections: readonly string[]): void {
    this.rowsChanged(projections);
  }

  onRowsChanged(listener: (projections: readonly string[] | null) => void): () => void {
    this.changeListeners.add(listener);
    this.ensureListening();
    return () => this.changeListeners.delete(listener);
  }

  hearsEveryChange(): boolean {
    return this.hearsEveryCommit;
  }

  private rowsChanged(projections: readonly string[] | null): void {
    for (const listener of [...this.changeListeners]) {
      try {
        listener(projections);
      } catch (error) {
        this.options.logger?.warn({ err: error }, 'read-model change listener failed');
      }
    }
  }

  /** Highest position known per projection. */
  positions(): ReadonlyMap<string, Position> {
    return this.known;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.hearsEveryCommit = false;
    this.rowsChanged(null);
    for (const waiter of [...this.waiters]) waiter.resolve(false);
    this.stopPolling();
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    if (this.connecting) await this.connecting.catch(() => undefined);
    const listener = this.listener;
    this.listener = null;
    if (listener) await listener.end().catch(() => undefined);
    // A checkpoint read in flight is not awaited: it may wait on a pool that is being destroyed.
  }

  private reached(position: Position, names: readonly string[] | undefined): boolean {
    const wanted = names ?? [...this.known.keys()];
    if (wanted.length === 0) return false;
    return wanted.every((name) => {
      const at = this.known.get(name);
      return at !== undefined && comparePositions(at, position) >= 0;
    });
  }

  private advance(progress: readonly ProjectionProgress[]): void {
    let changed = false;
    for (const { name, position } of progress) {
      const at = this.known.get(name);
      // Only forward: a rebuild moves a checkpoint with no loss, and a late reply must not move it back.
      if (at === undefined || comparePositions(position, at) > 0) {
        this.known.set(name, position);
        changed = true;
      }
    }
    if (!changed) return;
    for (const waiter of [...this.waiters]) {
      if (this.reached(waiter.position, waiter.names)) waiter.resolve(true);
    }
  }

  /** Reads every checkpoint; concurrent callers share one query. True when the read succeeded. */
  private refresh(): Promise<boolean> {
    this.refreshing ??= (async () => {
      try {
        const { rows } = await this.knex.raw<{ rows: Array<{ name: string; c: string; p: string }> }>(
          'SELECT name, position_commit::text AS c, position_prepare::text AS p FROM projection_checkpoints',
        );
        this.loaded = true;
        this.advance(rows.map((r) => ({ name: r.name, position: { commit: BigInt(r.c), prepare: BigInt(r.p) } })));
        return true;
      } catch (error) {
        this.options.logger?.warn({ err: error }, 'watermark could not read projection checkpoints');
        return false;
      } finally {
        this.refreshing = null;
      }
    })();
    return this.refreshing;
  }

  private ensureListening(): void {
    if (this.closed || this.listener || this.connecting || this.reconnectTimer) return;
    this.connecting = (async () => {
      let client: pg.Client | null = null;
      try {
        // Outside the pool: a LISTEN connection is held for the life of the process.
        client = (await this.knex.client.acquireRawConnection()) as pg.Client;
        client.on('error', (error) => this.options.logger?.warn({ err: error }, 'watermark LISTEN connection error'));
        client.on('notification', (message) => {
          if (message.channel === PROGRESS_CHANNEL && message.payload) this.advance(decodeProgress(message.payload));
          if (message.channel === ROWS_CHANGED_CHANNEL) this.rowsChanged(message.payload ? message.payload.split(' ') : null);
        });
        client.once('end', () => {
          if (this.listener !== client) return;
          this.listener = null;
          this.hearsEveryCommit = false;
          this.rowsChanged(null); // whatever changes until LISTEN is back go unheard
          this.scheduleReconnect();
        });
        await client.query(`LISTEN ${PROGRESS_CHANNEL}; LISTEN ${ROWS_CHANGED_CHANNEL}`);
        if (this.closed) {
          await client.end().catch(() => undefined);
          return;
        }
        this.listener = client;
      } catch (error) {
        this.options.logger?.warn({ err: error }, 'watermark cannot LISTEN; polling checkpoints meanwhile');
        if (client) await client.end().catch(() => undefined);
        this.scheduleReconnect();
        return;
      } finally {
        this.connecting = null;
      }
      // Anything committed before LISTEN took effect was not notified to us; a read already in
      // flight may have started before it, so a new one is made.
      if (this.refreshing) await this.refreshing;
      if ((await this.refresh()) && this.listener === client) this.hearsEveryCommit = true;
    })();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.reconnectTimer) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      this.ensureListening();
    }, this.options.reconnectMs ?? 1000);
    this.reconnectTimer.unref();
  }

  private startPolling(): void {
    if (this.pollTimer || this.closed) return;
    this.pollTimer = setInterval(() => void this.refresh(), this.options.pollIntervalMs ?? 1000);
    this.pollTimer.unref();
  }

  private stopPolling(): void {
    if (this.pollTimer) clearInterval(this.pollTimer);
    this.pollTimer = null;
  }
}
