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
  START,
  type EventStore,
  type Position,
  type RecordedEvent,
  type Subscription,
} from '../shared/event-store/event-store.js';
import { PASS_EVENTS_TOPIC, type PassBus } from '../shared/pass-bus/pass-bus.js';
import { isPassEvent, toPassEventMessage } from '../shared/pass-bus/pass-event-message.js';
import type { Reactor } from './reactor.js';
import { followFromCheckpoint, readReactorCheckpoint, writeReactorCheckpoint } from './reactor-checkpoints.js';
import { StoppableRetry } from './stoppable-retry.js';

export const PASS_EVENT_FORWARDER = 'pass-event-forwarder';

/** The pass event types known today; the standalone forwarder also takes later `Pass*` events. */
export const FORWARDED_PASS_EVENT_TYPES = ['PassCreated', 'PassRevoked', 'PassRegistered', 'PassCheckedIn', 'PassCheckedOut'] as const;

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

export class PassEventForwarder implements Reactor {
  readonly name: string;
  readonly handles = FORWARDED_PASS_EVENT_TYPES;
  private subscription: Subscription | null = null;
  private readonly retry: StoppableRetry;
  private position: Position = START;

  constructor(private readonly options: PassEventForwarderOptions) {
    this.name = options.name ?? PASS_EVENT_FORWARDER;
    this.retry = new StoppableRetry(`pass event forwarder ${this.name}`, options.logger, options.retry);
  }

  /** Creates the topics, reads the checkpoint and follows the store from it. */
  async start(): Promise<void> {
    if (this.subscription) throw new Error('forwarder already started');
    await this.retry.run('create topics', () => this.options.bus.ensureTopics());
    const followed = await followFromCheckpoint({
      ...this.options,
      name: this.name,
      retry: this.retry,
      context: { bus: this.options.bus.kind },
      batchSize: this.options.batchSize ?? 500,
      onEvents: (events) => this.handleBatch(events),
    });
    this.position = followed.position;
    // stop() called while this was starting found no subscription to end: end this one now.
    if (this.retry.stopped) return followed.subscription.stop();
    this.subscription = followed.subscription;
  }

  async stop(): Promise<void> {
    this.retry.stop();
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
    const [checkpoint, head] = await Promise.all([readReactorCheckpoint(this.options.knex, this.name), this.options.store.headPosition()]);
    return {
      name: this.name,
      position: checkpoint.position,
      head,
      caughtUp: comparePositions(checkpoint.position, head) >= 0,
      eventsForwarded: checkpoint.count,
    };
  }

  private async handleBatch(events: readonly RecordedEvent[]): Promise<void> {
    const last = events.at(-1);
    if (!last || comparePositions(last.position, this.position) <= 0) return;
    const messages = events.filter((e) => comparePositions(e.position, this.position) > 0 && isPassEvent(e)).map(toPassEventMessage);
    if (messages.length > 0) {
      const started = Date.now();
      await this.retry.run('publish', () => this.options.bus.publish(PASS_EVENTS_TOPIC, messages));
      this.options.logger?.debug({ forwarder: this.name, count: messages.length, ms: Date.now() - started }, 'pass events forwarded');
    }
    // Only now, with the bus's acknowledgement in hand, may the checkpoint pass these events.
    await this.retry.run('checkpoint', () => this.writeCheckpoint(last.position, messages.length));
    this.position = last.position;
  }

  private async writeCheckpoint(position: Position, forwarded: number): Promise<void> {
    await writeReactorCheckpoint(this.options.knex, this.name, position, forwarded);
  }
}
