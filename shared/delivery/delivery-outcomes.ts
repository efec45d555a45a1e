// How a pass create learns that its email and SMS were accepted (or not) within DELIVERY_WAIT_MS.
// The delivery worker records each outcome on the batch's delivery stream and then NOTIFYs
// `pass_delivery` with the batch ids it recorded (space-separated); each process keeps one LISTEN
// connection (not one per waiter) and hands each id to the waiters of that batch (a map lookup).
// A create starts watching its batch before the batch's PassCreated is appended, so no outcome
// can come before the watch; on a notification for its batch it reads the stream (the reads of
// waiters woken together go out as one), and the answer comes from the log, never from the
// notification. A worker in the same process tells its waiters what it recorded directly, which
// needs no read at all. While the LISTEN connection is down (or was when the watch began), a
// watch reads its stream every half second instead.
import type { Knex } from 'knex';
import type pg from 'pg';
import type { Logger } from '../logger.js';
import { fold } from '../domain/decider.js';
import { streams } from '../domain/events.js';
import type { DeliveryChannel } from '../domain/delivery-events.js';
import { passDeliveryDecider, type PassDeliveryState } from '../domain/pass-delivery-decider.js';
import type { EventStore, Position, RecordedEvent, StreamRead } from '../event-store/event-store.js';
import { batchPerTurn } from '../db/turn-batch.js';

export const DELIVERY_NOTIFY_CHANNEL = 'pass_delivery';

/** NOTIFY payloads are limited to 8000 bytes: batch ids (UUIDs) go in chunks well below that. */
const IDS_PER_NOTIFICATION = 150;

/** The payloads that tell other processes these batches' outcomes were recorded. */
export function encodeDeliveryNotifications(batchIds: readonly string[]): string[] {
  const payloads: string[] = [];
  for (let i = 0; i < batchIds.length; i += IDS_PER_NOTIFICATION) payloads.push(batchIds.slice(i, i + IDS_PER_NOTIFICATION).join(' '));
  return payloads;
}

export interface DeliveryReport {
  readonly state: PassDeliveryState;
  /** Position of the newest outcome event, for read-your-writes; null when none is recorded. */
  readonly position: Position | null;
}

/** What the create call waits on: a port, so tests and the CLI can do without delivery. */
export interface DeliveryOutcomes {
  /**
   * Starts watching a batch: call before its PassCreated is appended, or say that it was appended
   * already (`appended`: the watch then reads what was recorded before it began).
   */
  watch(batchId: string, options?: { readonly appended?: boolean }): DeliveryWatch;
}

export interface DeliveryWatch {
  /** The batch's delivery once every channel named is settled, or as it stands after `timeoutMs`; ends the watch. */
  until(channels: readonly DeliveryChannel[], timeoutMs: number): Promise<DeliveryReport>;
  /** Ends the watch without waiting (the create failed). */
  cancel(): void;
}

interface Waiter {
  readonly batchId: string;
  /** A notification for the batch came since the last read. */
  woken: boolean;
  /** What a worker of this process recorded, when it said: no read needed. */
  told: DeliveryReport | null;
  wake: () => void;
}

const POLL_MS = 500;
const RECONNECT_MS = 1000;

export class PostgresDeliveryOutcomes implements DeliveryOutcomes {
  /** Waiters by batch id (nearly always one per batch). */
  private readonly waiters = new Map<string, Waiter[]>();
  private listener: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private closed = false;
  /** Stream reads asked for in the same turn go out as one. */
  private readonly readStream: (request: StreamRead) => Promise<RecordedEvent[]>;

  constructor(
    private readonly knex: Knex,
    private readonly store: EventStore,
    private readonly logger?: Logger,
  ) {
    this.readStream = batchPerTurn((requests: StreamRead[]) => this.store.readStreams(requests));
  }

  watch(batchId: string, options: { readonly appended?: boolean } = {}): DeliveryWatch {
    this.ensureListening();
    const waiter: Waiter = { batchId, woken: false, told: null, wake: () => void (waiter.woken = true) };
    // Listening already, from before the batch was appended: every outcome is notified, so
    // nothing needs reading first.
    const heardFromStart = this.listener !== null && options.appended !== true;
    const same = this.waiters.get(batchId);
    if (same) same.push(waiter);
    else this.waiters.set(batchId, [waiter]);
    return {
      until: async (channels, timeoutMs) => {
        try {
          return await this.until(waiter, !heardFromStart, channels, timeoutMs);
        } finally {
          this.forget(waiter);
        }
      },
      cancel: () => this.forget(waiter),
    };
  }

  private forget(waiter: Waiter): void {
    const same = this.waiters.get(waiter.batchId);
    if (!same) return;
    const left = same.filter((w) => w !== waiter);
    if (left.length > 0) this.waiters.set(waiter.batchId, left);
    else this.waiters.delete(waiter.batchId);
  }

  private async until(waiter: Waiter, readFirst: boolean, channels: readonly DeliveryChannel[], timeoutMs: number): Promise<DeliveryReport> {
    const deadline = Date.now() + Math.max(0, timeoutMs);
    const settled = (r: DeliveryReport) => channels.every((c) => r.state[c].status !== 'pending');
    let report: DeliveryReport | null = null;
    let mustRead = readFirst;
    for (;;) {
      if (mustRead || waiter.woken) {
        waiter.woken = false;
        report = waiter.told ?? (await this.read(waiter.batchId));
        waiter.told = null;
        if (settled(report) || this.closed) return report;
      }
      const remaining = deadline - Date.now();
      if (remaining <= 0) return report ?? (await this.read(waiter.batchId));
      // Without a listener, poll; with one, sleep until a notification (or the deadline).
      mustRead = this.listener === null;
      if (waiter.woken) continue;
      const pause = mustRead ? Math.min(remaining, POLL_MS) : remaining;
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        waiter.wake = () => {
          waiter.woken = true;
          resolve();
        };
        timer = setTimeout(resolve, pause);
      });
      clearTimeout(timer);
    }
  }

  /**
   * A batch whose outcome was recorded: heard by NOTIFY, or from a worker of this process, which
   * also tells the stream's state right after its append (the in-process fast path: no read).
   */
  observe(batchId: string, report?: DeliveryReport): void {
    const same = this.waiters.get(batchId);
    if (!same) return;
    for (const waiter of same) {
      if (report) waiter.told = report;
      waiter.wake();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const same of this.waiters.values()) for (const waiter of same) waiter.wake();
    await this.connecting?.catch(() => undefined);
    const listener = this.listener;
    this.listener = null;
    await listener?.end().catch(() => undefined);
  }

  private async read(batchId: string): Promise<DeliveryReport> {
    const events = await this.readStream({ streamName: streams.passDelivery(batchId) });
    return {
      state: fold(passDeliveryDecider, events as never[]),
      position: events.at(-1)?.position ?? null,
    };
  }

  private ensureListening(): void {
    if (this.listener || this.connecting || this.closed) return;
    this.connecting = this.connect().finally(() => (this.connecting = null));
  }

  private async connect(): Promise<void> {
    let client: pg.Client | null = null;
    try {
      client = (await this.knex.client.acquireRawConnection()) as pg.Client;
      const lost = () => {
        if (this.listener !== client) return;
        this.listener = null;
        if (!this.closed) setTimeout(() => this.ensureListening(), RECONNECT_MS).unref();
      };
      client.on('error', lost);
      client.on('end', lost);
      client.on('notification', (message) => {
        if (message.channel !== DELIVERY_NOTIFY_CHANNEL || !message.payload) return;
        for (const batchId of message.payload.split(' ')) if (batchId) this.observe(batchId);
      });
      await client.query(`LISTEN ${DELIVERY_NOTIFY_CHANNEL}`);
      if (this.closed) {
        await client.end();
        return;
      }
      this.listener = client;
      // Anyone who waited while there was no listener reads again now.
      for (const same of this.waiters.values()) for (const waiter of same) waiter.wake();
    } catch (error) {
      this.logger?.warn({ err: error }, 'pass delivery: cannot listen for outcomes; waiters poll');
      await client?.end().catch(() => undefined);
      if (!this.closed) setTimeout(() => this.ensureListening(), RECONNECT_MS).unref();
    }
  }
}
