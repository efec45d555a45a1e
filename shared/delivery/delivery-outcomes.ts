// How a pass create learns that its email and SMS were accepted (or not) within DELIVERY_WAIT_MS.
// The delivery worker records each outcome on the batch's delivery stream and then NOTIFYs
// `pass_delivery` with the batch id; each process keeps one LISTEN connection (not one per
// waiter). A waiter reads the stream itself when it starts and on each notification for its
// batch, so an outcome recorded before it began waiting is not missed, and the answer comes
// from the log, never from the notification. While the LISTEN connection is down, waiters read
// their streams every half second instead.
import type { Knex } from 'knex';
import type pg from 'pg';
import type { Logger } from '../logger.js';
import { fold } from '../domain/decider.js';
import { streams } from '../domain/events.js';
import type { DeliveryChannel } from '../domain/delivery-events.js';
import { passDeliveryDecider, type PassDeliveryState } from '../domain/pass-delivery-decider.js';
import type { EventStore, Position } from '../event-store/event-store.js';

export const DELIVERY_NOTIFY_CHANNEL = 'pass_delivery';

export interface DeliveryReport {
  readonly state: PassDeliveryState;
  /** Position of the newest outcome event, for read-your-writes; null when none is recorded. */
  readonly position: Position | null;
}

/** What the create call waits on: a port, so tests and the CLI can do without delivery. */
export interface DeliveryOutcomes {
  /** The batch's delivery once every channel named is settled, or as it stands after `timeoutMs`. */
  waitFor(batchId: string, channels: readonly DeliveryChannel[], timeoutMs: number): Promise<DeliveryReport>;
}

interface Waiter {
  readonly batchId: string;
  readonly wake: () => void;
}

const POLL_MS = 500;
const RECONNECT_MS = 1000;

export class PostgresDeliveryOutcomes implements DeliveryOutcomes {
  private readonly waiters = new Set<Waiter>();
  private listener: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private closed = false;

  constructor(
    private readonly knex: Knex,
    private readonly store: EventStore,
    private readonly logger?: Logger,
  ) {}

  async waitFor(batchId: string, channels: readonly DeliveryChannel[], timeoutMs: number): Promise<DeliveryReport> {
    const deadline = Date.now() + Math.max(0, timeoutMs);
    let wake: () => void = () => undefined;
    const waiter: Waiter = { batchId, wake: () => wake() };
    this.waiters.add(waiter);
    try {
      this.ensureListening();
      for (;;) {
        // Armed before the read: a notification during the read is not lost.
        const woken = new Promise<void>((resolve) => (wake = resolve));
        const report = await this.read(batchId);
        const remaining = deadline - Date.now();
        if (channels.every((c) => report.state[c].status !== 'pending') || remaining <= 0 || this.closed) return report;
        const pause = this.listener ? remaining : Math.min(remaining, POLL_MS);
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([woken, new Promise<void>((resolve) => (timer = setTimeout(resolve, pause)))]);
        clearTimeout(timer);
      }
    } finally {
      this.waiters.delete(waiter);
    }
  }

  /** In-process fast path: the worker of this process reports a batch whose outcome it recorded. */
  observe(batchId: string): void {
    for (const waiter of this.waiters) if (waiter.batchId === batchId) waiter.wake();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const waiter of this.waiters) waiter.wake();
    await this.connecting?.catch(() => undefined);
    const listener = this.listener;
    this.listener = null;
    await listener?.end().catch(() => undefined);
  }

  private async read(batchId: string): Promise<DeliveryReport> {
    const events = await this.store.readStream(streams.passDelivery(batchId));
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
        if (message.channel === DELIVERY_NOTIFY_CHANNEL && message.payload) this.observe(message.payload);
      });
      await client.query(`LISTEN ${DELIVERY_NOTIFY_CHANNEL}`);
      if (this.closed) {
        await client.end();
        return;
      }
      this.listener = client;
      // Anyone who waited while there was no listener reads again now.
      for (const waiter of this.waiters) waiter.wake();
    } catch (error) {
      this.logger?.warn({ err: error }, 'pass delivery: cannot listen for outcomes; waiters poll');
      await client?.end().catch(() => undefined);
      if (!this.closed) setTimeout(() => this.ensureListening(), RECONNECT_MS).unref();
    }
  }
}
