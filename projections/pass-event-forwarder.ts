// The pass event forwarder: a reactor that follows the event store's global order from its own
// checkpoint and publishes every pass event (PassCreated, PassRevoked, PassCheckedIn and any later
// Pass* event) to guestpass.pass-events, keyed by pass id, the event id in a header.
//
// At-least-once: the checkpoint (forwarder_checkpoints, migration 004) moves only after the bus
// acknowledged the whole batch. A crash between the two publishes the batch again; consumers
// dedupe by event id / version. A failing publish or checkpoint write is retried in place with
// back-off, so the subscription (which ends on a handler error) only ends when we stop it.
import type { Knex } from 'knex';
import type { Logger } from '../shared/logger.js';
import {
  comparePositions,
  positionToString,
  START,
  type EventStore,
  type Position,
  type RecordedEvent,
  type Subscription,
} from '../shared/event-store/event-store.js';
import { PASS_EVENTS_TOPIC, type PassBus } from '../shared/pass-bus/pass-bus.js';
import { isPassEvent, toPassEventMessage } from '../shared/pass-bus/pass-event-message.js';
import type { Reactor } from './reactor.js';

export const PASS_EVENT_FORWARDER = 'pass-event-forwarder';

/** The pass event types known today; the standalone forwarder also takes later `Pass*` events. */
export const FORWARDED_PASS_EVENT_TYPES = ['PassCreated', 'PassRevoked', 'PassCheckedIn'] as const;

export interface PassEventForwarderOptions {
  readonly store: EventStore;
  readonly knex: Knex;
  readonly bus: PassBus;
  readonly logger?: Logger;
  /** Checkpoint row name (default `pass-event-forwarder`). */
  readonly name?: string;
  readonly batchSize?: number;
  readonly retry?: { readonly initialMs?: number; readonly maxMs?: number };
}

export interface ForwarderStatus {
  readonly name: string;
  readonly position: Position;
  readonly head: Position;
  readonly caughtUp: boolean;
  readonly eventsForwarded: number;
}

class Stopped extends Error {
  override readonly name = 'Stopped';
}

export class PassEventForwarder implements Reactor {
  readonly name: string;
  readonly handles = FORWARDED_PASS_EVENT_TYPES;
  private subscription: Subscription | null = null;
  private stopping = false;
  private wakeStop: (() => void) | null = null;
  private readonly stopSignal: Promise<never>;
  private position: Position = START;

  constructor(private readonly options: PassEventForwarderOptions) {
    this.name = options.name ?? PASS_EVENT_FORWARDER;
    this.stopSignal = new Promise<never>((_, reject) => {
      this.wakeStop = () => reject(new Stopped('forwarder stopping'));
    });
    this.stopSignal.catch(() => undefined);
  }

  /** Creates the topics, reads the checkpoint and follows the store from it. */
  async start(): Promise<void> {
    if (this.subscription) throw new Error('forwarder already started');
    await this.retrying('create topics', () => this.options.bus.ensureTopics());
    this.position = await this.readCheckpoint();
    this.options.logger?.info({ forwarder: this.name, from: positionToString(this.position), bus: this.options.bus.kind }, 'pass event forwarder started');
    this.subscription = this.options.store.subscribeToAll({
      after: this.position,
      batchSize: this.options.batchSize ?? 500,
      onEvents: (events) => this.handleBatch(events),
      onError: (error) => {
        if (!(error instanceof Stopped)) this.options.logger?.error({ err: error, forwarder: this.name }, 'pass event forwarder subscription error');
      },
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wakeStop?.();
    const subscription = this.subscription;
    this.subscription = null;
    await subscription?.stop();
  }

  /** Reactor seam (projections/reactor.ts): publishes a batch's pass events; resolves once acknowledged. */
  async react(events: readonly RecordedEvent[]): Promise<void> {
    const messages = events.filter(isPassEvent).map(toPassEventMessage);
    if (messages.length > 0) await this.options.bus.publish(PASS_EVENTS_TOPIC, messages);
  }

  async status(): Promise<ForwarderStatus> {
    const [row, head] = await Promise.all([
      this.options.knex('forwarder_checkpoints').where({ name: this.name }).first<CheckpointRow | undefined>(),
      this.options.store.headPosition(),
    ]);
    const position = row ? toPosition(row) : START;
    return {
      name: this.name,
      position,
      head,
      caughtUp: comparePositions(position, head) >= 0,
      eventsForwarded: row ? Number(row.events_forwarded) : 0,
    };
  }

  private async handleBatch(events: readonly RecordedEvent[]): Promise<void> {
    const last = events.at(-1);
    if (!last || comparePositions(last.position, this.position) <= 0) return;
    const messages = events.filter((e) => comparePositions(e.position, this.position) > 0 && isPassEvent(e)).map(toPassEventMessage);
    if (messages.length > 0) {
      const started = Date.now();
      await this.retrying('publish', () => this.options.bus.publish(PASS_EVENTS_TOPIC, messages));
      this.options.logger?.debug({ forwarder: this.name, count: messages.length, ms: Date.now() - started }, 'pass events forwarded');
    }
    // Only now, with the bus's acknowledgement in hand, may the checkpoint pass these events.
    await this.retrying('checkpoint', () => this.writeCheckpoint(last.position, messages.length));
    this.position = last.position;
  }

  private async readCheckpoint(): Promise<Position> {
    const row = await this.retrying('read checkpoint', () =>
      this.options.knex('forwarder_checkpoints').where({ name: this.name }).first<CheckpointRow | undefined>(),
    );
    return row ? toPosition(row) : START;
  }

  private async writeCheckpoint(position: Position, forwarded: number): Promise<void> {
    const { knex } = this.options;
    // Never moves backwards, even if a second forwarder of the same name ran ahead meanwhile.
    await knex.raw(
      `INSERT INTO forwarder_checkpoints AS c (name, commit_position, prepare_position, events_forwarded, updated_at)
       VALUES (?, ?, ?, ?, now())
       ON CONFLICT (name) DO UPDATE SET
         commit_position = excluded.commit_position,
         prepare_position = excluded.prepare_position,
         events_forwarded = c.events_forwarded + excluded.events_forwarded,
         updated_at = now()
       WHERE (c.commit_position, c.prepare_position) < (excluded.commit_position, excluded.prepare_position)`,
      [this.name, position.commit.toString(), position.prepare.toString(), forwarded],
    );
  }

  /** Runs `work` until it succeeds, backing off; throws Stopped as soon as stop() is called. */
  private async retrying<T>(what: string, work: () => Promise<T>): Promise<T> {
    const initial = this.options.retry?.initialMs ?? 100;
    const max = this.options.retry?.maxMs ?? 5000;
    for (let attempt = 0; ; attempt++) {
      if (this.stopping) throw new Stopped('forwarder stopping');
      try {
        // Racing the stop signal lets stop() return while the bus still waits for a broker.
        return await Promise.race([work(), this.stopSignal]);
      } catch (error) {
        if (error instanceof Stopped || this.stopping) throw new Stopped('forwarder stopping');
        const delay = Math.min(max, initial * 2 ** attempt);
        this.options.logger?.warn({ err: error, forwarder: this.name, attempt: attempt + 1, retryInMs: delay }, `pass event forwarder: ${what} failed`);
        await Promise.race([new Promise((resolve) => setTimeout(resolve, delay).unref()), this.stopSignal]);
      }
    }
  }
}

interface CheckpointRow {
  name: string;
  commit_position: string;
  prepare_position: string;
  events_forwarded: string | number;
}

function toPosition(row: CheckpointRow): Position {
  return { commit: BigInt(row.commit_position), prepare: BigInt(row.prepare_position) };
}
