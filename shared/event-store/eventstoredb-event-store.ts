// The EventStoreDB adapter (production), selected by an esdb:// or esdb+discover:// URL.
//
// Mapping to the port: stream revisions are bigint in the client and number here; the port's
// 'no_stream'/'any' are the client's NO_STREAM/ANY; positions are the $all commit/prepare pair.
// System records ($-prefixed event types or streams: stream metadata, statistics, projection
// links) are EventStoreDB's own and never reach a caller of readAll or a subscription; nor does
// the store's identity (a stream of its own, see identity()). An event another writer put in the
// database that is not JSON (data or metadata) cannot be one of this service's: readAll and the
// subscription log it, without its data, and pass over it, as a projection passes over an event
// type it does not know.
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import {
  ANY,
  BACKWARDS,
  END,
  EventStoreDBClient,
  FORWARDS,
  NO_STREAM,
  START as ESDB_START,
  StreamNotFoundError,
  WrongExpectedVersionError,
  excludeSystemEvents,
  jsonEvent,
  type AllStreamResolvedEvent,
  type AllStreamSubscription,
  type AppendExpectedRevision,
  type JSONType,
  type ReadPosition,
  type ResolvedEvent,
} from '@eventstore/db-client';
import {
  START,
  WrongExpectedVersion,
  comparePositions,
  positionToString,
  type AppendResult,
  type EventMetadata,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type Position,
  type ReadAllOptions,
  type ReadStreamOptions,
  type StreamRead,
  type RecordedEvent,
  type SubscribeOptions,
  type Subscription,
} from './event-store.js';
import { createLogger, type Logger } from '../logger.js';

const PAGE_SIZE = 500;
const DEFAULT_BATCH_SIZE = 500;
const MAX_RESUBSCRIBE_DELAY_MS = 30_000;
/**
 * Event-loop turns a short batch waits for more while events keep arriving: the client moves what
 * gRPC received into its buffer asynchronously, so a catch-up would otherwise hand over whatever
 * happened to be buffered at that instant.
 */
const TOP_UP_TURNS = 8;
/** Foreign events remembered as already logged (each is logged once per store, not per read). */
const MAX_REPORTED_FOREIGN = 10_000;

/** The stream holding the store's identity: one event, written by the first identity() caller. */
export const IDENTITY_STREAM = 'guestpass-store-identity';
const IDENTITY_EVENT_TYPE = 'EventStoreIdentified';

type ClientEvent = NonNullable<ResolvedEvent['event']> | NonNullable<AllStreamResolvedEvent['event']>;

export interface EventStoreDbOptions {
  /** Dispose of the client on close(); true when the store created it. */
  readonly ownsClient?: boolean;
  /** Where events passed over (not JSON) are reported; default a logger of its own. */
  readonly logger?: Pick<Logger, 'warn'>;
}

export class EventStoreDbEventStore implements EventStore {
  private readonly subscriptions = new Set<CatchUpSubscription>();
  private readonly ownsClient: boolean;
  private readonly logger: Pick<Logger, 'warn'>;
  private readonly reportedForeign = new Set<string>();
  private identityRead: Promise<string> | null = null;
  private closed = false;

  constructor(
    private readonly client: EventStoreDBClient,
    options: EventStoreDbOptions = {},
  ) {
    this.ownsClient = options.ownsClient ?? false;
    this.logger = options.logger ?? createLogger(process.env.LOG_LEVEL ?? 'info', 'event-store');
  }

  async appendToStream(streamName: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    if (!streamName) throw new RangeError('stream name must not be empty');
    if (events.length === 0) throw new RangeError(`nothing to append to ${streamName}`);
    const expectedRevision = toClientExpected(expected);
    try {
      const result = await this.client.appendToStream(
        streamName,
        events.map((e) =>
          jsonEvent({
            id: e.id,
            type: e.type,
            // The client's JSONType is narrower than any JSON value; it JSON-encodes whatever it gets.
            data: (e.data === undefined ? null : e.data) as JSONType,
            metadata: e.metadata as unknown as JSONType,
          }),
        ),
        { expectedRevision },
      );
      if (!result.success) {
        // A client built with throwOnAppendFailure=false (a connection-string option) reports a
        // conflict this way instead of throwing; its revision is not reliable, the stream's is.
        const [last] = await this.readStream(streamName, { direction: 'backwards', maxCount: 1 });
        throw new WrongExpectedVersion(streamName, expected, last ? last.revision : 'no_stream');
      }
      const position = result.position ?? (await this.positionOf(streamName, result.nextExpectedRevision));
      return { nextExpectedRevision: Number(result.nextExpectedRevision), position };
    } catch (error) {
      if (error instanceof WrongExpectedVersionError) {
        const actual = error.actualVersion === NO_STREAM ? 'no_stream' : Number(error.actualVersion);
        throw new WrongExpectedVersion(streamName, expected, actual);
      }
      throw error;
    }
  }

  /** The server answers a repeated (idempotent) append without a position: the last event of the append has it. */
  private async positionOf(streamName: string, revision: bigint): Promise<Position> {
    const [last] = await this.readStream(streamName, { fromRevision: Number(revision), maxCount: 1 });
    if (!last) throw new Error(`EventStoreDB reported ${streamName} at revision ${revision}, which cannot be read`);
    return last.position;
  }

  /** EventStoreDB reads one stream per call: the reads run side by side. */
  readStreams(requests: readonly StreamRead[]): Promise<RecordedEvent[][]> {
    return Promise.all(requests.map((r) => this.readStream(r.streamName, { fromRevision: r.fromRevision ?? 0 })));
  }

  async readStream(streamName: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const backwards = options.direction === 'backwards';
    const from = options.fromRevision !== undefined ? BigInt(options.fromRevision) : backwards ? END : ESDB_START;
    const events: RecordedEvent[] = [];
    try {
      const read = this.client.readStream(streamName, {
        fromRevision: from,
        direction: backwards ? BACKWARDS : FORWARDS,
        ...(options.maxCount !== undefined ? { maxCount: options.maxCount } : {}),
      });
      for await (const resolved of read) {
        if (resolved.event) events.push(toRecordedEvent(resolved.event, resolved.commitPosition));
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return [];
      throw error;
    }
    return events;
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const wanted = options.maxCount ?? Number.POSITIVE_INFINITY;
    const events: RecordedEvent[] = [];
    if (wanted <= 0) return events;
    // Pages of $all, from a position that the server treats as inclusive: whatever is at or
    // before the last position seen is dropped, so the caller's `after` stays exclusive.
    let seen = options.after ?? START;
    for (;;) {
      const page = await collect(
        this.client.readAll({ fromPosition: toReadPosition(seen), direction: FORWARDS, maxCount: PAGE_SIZE }),
      );
      for (const resolved of page) {
        const event = resolved.event;
        if (!event || comparePositions(event.position, seen) <= 0) continue;
        seen = event.position;
        if (this.passesOver(event)) continue;
        events.push(toRecordedEvent(event));
        if (events.length >= wanted) return events;
      }
      if (page.length < PAGE_SIZE) return events;
    }
  }

  subscribeToAll(options: SubscribeOptions): Subscription {
    if (this.closed) throw new Error('the event store is closed');
    const subscription = new CatchUpSubscription(
      this.client,
      options,
      (event) => this.passesOver(event),
      () => this.subscriptions.delete(subscription),
    );
    this.subscriptions.add(subscription);
    return subscription;
  }

  async headPosition(): Promise<Position> {
    let before: ReadPosition = END;
    for (;;) {
      const page: AllStreamResolvedEvent[] = await collect(
        this.client.readAll({ fromPosition: before, direction: BACKWARDS, maxCount: PAGE_SIZE }),
      );
      for (const resolved of page) {
        const event = resolved.event;
        if (event && !this.passesOver(event) && (before === END || comparePositions(event.position, before as Position) < 0)) {
          return event.position;
        }
      }
      const last = page.at(-1)?.event;
      if (page.length < PAGE_SIZE || !last) return START;
      before = last.position;
    }
  }

  /**
   * `eventstoredb:<uuid>`, from the first event of IDENTITY_STREAM, written by the first caller
   * (a normal stream: a $-prefixed one would need admin rights in a secured cluster). A database
   * wiped and started again gets a new one, so checkpoints kept from before are refused.
   */
  identity(): Promise<string> {
    this.identityRead ??= this.readOrCreateIdentity().catch((error: unknown) => {
      this.identityRead = null; // a failed read (server not up yet) is tried again next time
      throw error;
    });
    return this.identityRead;
  }

  private async readOrCreateIdentity(): Promise<string> {
    const existing = await this.readIdentity();
    if (existing) return existing;
    try {
      await this.client.appendToStream(IDENTITY_STREAM, jsonEvent({ type: IDENTITY_EVENT_TYPE, data: { id: randomUUID() } }), {
        expectedRevision: NO_STREAM,
      });
    } catch (error) {
      // Another process wrote it first: its identity is the store's.
      if (!(error instanceof WrongExpectedVersionError)) throw error;
    }
    const written = await this.readIdentity();
    if (!written) throw new Error(`EventStoreDB: ${IDENTITY_STREAM} cannot be read after it was written`);
    return written;
  }

  private async readIdentity(): Promise<string | null> {
    try {
      for await (const resolved of this.client.readStream(IDENTITY_STREAM, { fromRevision: ESDB_START, direction: FORWARDS, maxCount: 1 })) {
        const id = (resolved.event?.data as { id?: unknown } | undefined)?.id;
        if (typeof id !== 'string' || !id) throw new Error(`EventStoreDB: the first event of ${IDENTITY_STREAM} names no identity`);
        return `eventstoredb:${id}`;
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return null;
      throw error;
    }
    return null;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.subscriptions].map((s) => s.stop()));
    if (this.ownsClient) await this.client.dispose();
  }

  /**
   * True for what no caller of readAll or a subscription sees: EventStoreDB's own records, the
   * identity stream, and events that are not JSON (logged once, without their data).
   */
  private passesOver(event: ClientEvent): boolean {
    if (isHidden(event)) return true;
    const reason = foreignReason(event);
    if (reason === null) return false;
    if (!this.reportedForeign.has(event.id)) {
      if (this.reportedForeign.size >= MAX_REPORTED_FOREIGN) this.reportedForeign.clear();
      this.reportedForeign.add(event.id);
      this.logger.warn(
        {
          eventId: event.id,
          streamName: event.streamId,
          eventType: event.type,
          position: event.position ? positionToString(event.position) : null,
          reason,
        },
        `passing over event ${event.id} in ${event.streamId}: its ${reason}, so this service did not write it`,
      );
    }
    return true;
  }
}

/** A store over its own client, disposed on close(). */
export function createEventStoreDbEventStore(
  connectionString: string,
  options: Omit<EventStoreDbOptions, 'ownsClient'> = {},
): EventStoreDbEventStore {
  return new EventStoreDbEventStore(EventStoreDBClient.connectionString(connectionString), { ...options, ownsClient: true });
}

function toClientExpected(expected: ExpectedRevision): AppendExpectedRevision {
  if (expected === 'no_stream') return NO_STREAM;
  if (expected === 'any') return ANY;
  if (!(Number.isInteger(expected) && expected >= 0)) {
    throw new RangeError(`expected revision must be 'no_stream', 'any' or an integer >= 0 (got ${expected})`);
  }
  return BigInt(expected);
}

function toReadPosition(position: Position): ReadPosition {
  return comparePositions(position, START) === 0 ? ESDB_START : position;
}

function isHidden(event: ClientEvent): boolean {
  return event.type.startsWith('$') || event.streamId.startsWith('$') || event.streamId === IDENTITY_STREAM;
}

/**
 * Why an event cannot be one this service wrote (it writes JSON data with JSON metadata), or
 * null. The client hands over data that is not JSON as bytes (isJson false) and metadata it
 * cannot parse as bytes too.
 */
export function foreignReason(event: Pick<ClientEvent, 'isJson' | 'metadata'>): string | null {
  if (!event.isJson) return 'data is not JSON';
  if (event.metadata instanceof Uint8Array) return 'metadata is not JSON';
  return null;
}

function toRecordedEvent(event: ClientEvent, commitPosition?: bigint): RecordedEvent {
  // Stream reads carry the record's position from server 22.6 on; older servers send zeros (the
  // client's default), and no event of the log is at 0/0, so that is read as "none".
  const given = event.position && (event.position.commit !== 0n || event.position.prepare !== 0n) ? event.position : undefined;
  const position = given ?? (commitPosition !== undefined ? { commit: commitPosition, prepare: commitPosition } : null);
  if (!position) throw new Error(`EventStoreDB returned no position for event ${event.id} (server older than 22.6?)`);
  if (!event.isJson) throw new Error(`event ${event.id} in ${event.streamId} is not JSON`);
  return {
    id: event.id,
    type: event.type,
    data: event.data,
    metadata: event.metadata as unknown as EventMetadata,
    streamName: event.streamId,
    revision: Number(event.revision),
    position: { commit: position.commit, prepare: position.prepare },
    recordedAt: event.created,
  };
}

async function collect<T>(read: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of read) items.push(item);
  return items;
}

const insideHandler = new AsyncLocalStorage<CatchUpSubscription>();

/**
 * Follows $all with the client's catch-up subscription, handing the handler what has arrived (up
 * to batchSize) and reading no further until it returns, so the gRPC stream's own flow control
 * holds the server back. The client's subscription is a Node Readable that buffers only up to
 * its high-water mark (16 objects by default, so batches of 16 to 31 events whatever batchSize
 * said); it is given a high-water mark of batchSize, so a catch-up is handled in full batches.
 * When the server drops the subscription it is resumed from the last handled position; a failing
 * handler ends it (its owner holds the checkpoint).
 */
class CatchUpSubscription implements Subscription {
  private stopped = false;
  private current: AllStreamSubscription | null = null;
  private wake: (() => void) | null = null;
  private readonly done: Promise<void>;
  private readonly batchSize: number;

  constructor(
    private readonly client: EventStoreDBClient,
    private readonly options: SubscribeOptions,
    /** True for an event the handler never sees (system records, the identity, foreign events). */
    private readonly passesOver: (event: ClientEvent) => boolean,
    onDone: () => void,
  ) {
    const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
    if (!(Number.isInteger(batchSize) && batchSize >= 1)) throw new RangeError(`batchSize must be an integer >= 1 (got ${batchSize})`);
    this.batchSize = batchSize;
    // An error outside the handler (an event that cannot be read) ends the subscription like a
    // failing handler, reported; it must never be an unhandled rejection.
    this.done = this.run()
      .catch((error: unknown) => {
        this.stopped = true;
        this.report(error);
      })
      .finally(onDone);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.current?.unsubscribe().catch(() => undefined);
    if (insideHandler.getStore() === this) return; // the loop ends when the handler returns
    await this.done;
  }

  private async run(): Promise<void> {
    let handled = this.options.after;
    let failures = 0;
    while (!this.stopped) {
      const subscription = this.client.subscribeToAll(
        {
          ...(comparePositions(handled, START) === 0 ? {} : { fromPosition: handled }),
          filter: excludeSystemEvents(),
        },
        { highWaterMark: this.batchSize },
      );
      this.current = subscription;
      let ended: Error | 'end' | null = null;
      /** Moves on every event of the stream: a wait starts only if none came since the last read. */
      let signals = 0;
      const signal = () => {
        signals++;
        this.wake?.();
      };
      subscription.on('error', (error: Error) => {
        ended ??= error;
        signal();
      });
      subscription.on('end', () => {
        ended ??= 'end';
        signal();
      });
      subscription.on('readable', signal);
      try {
        while (!this.stopped && ended === null) {
          const seen = signals;
          const batch = await this.nextBatch(subscription, handled);
          if (batch.length === 0) {
            if (this.stopped || signals !== seen || subscription.readableLength > 0) continue;
            await new Promise<void>((resolve) => (this.wake = resolve));
            this.wake = null;
            continue;
          }
          try {
            await insideHandler.run(this, () => this.options.onEvents(batch));
          } catch (error) {
            this.report(error);
            this.stopped = true;
            break;
          }
          handled = batch.at(-1)!.position;
          failures = 0;
        }
      } finally {
        this.current = null;
        await subscription.unsubscribe().catch(() => undefined);
      }
      if (this.stopped) break;
      this.report(ended === 'end' ? new Error('EventStoreDB ended the subscription') : ended);
      failures++;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(MAX_RESUBSCRIBE_DELAY_MS, 250 * 2 ** failures));
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
    }
    this.stopped = true;
  }

  /**
   * The next batch after the last handled position: what is buffered, topped up for a few
   * event-loop turns while more keeps arriving, up to batchSize. Empty when nothing is buffered.
   */
  private async nextBatch(subscription: AllStreamSubscription, handled: Position): Promise<RecordedEvent[]> {
    const batch: RecordedEvent[] = [];
    let last = this.takeBuffered(subscription, handled, batch);
    for (let turn = 0; batch.length > 0 && batch.length < this.batchSize && turn < TOP_UP_TURNS; turn++) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (this.stopped || subscription.readableLength === 0) break; // nothing more came in a turn: the rest is not here yet
      last = this.takeBuffered(subscription, last, batch);
    }
    return batch;
  }

  /** Moves buffered events after `after` into `batch`, up to batchSize (a resumed subscription may repeat some); returns the last one's position. */
  private takeBuffered(subscription: AllStreamSubscription, after: Position, batch: RecordedEvent[]): Position {
    let last = after;
    while (batch.length < this.batchSize) {
      const resolved = subscription.read() as AllStreamResolvedEvent | null;
      if (resolved === null) break;
      const event = resolved.event;
      if (!event || comparePositions(event.position, last) <= 0 || this.passesOver(event)) continue;
      batch.push(toRecordedEvent(event));
      last = event.position;
    }
    return last;
  }

  private report(error: unknown): void {
    try {
      if (this.options.onError) this.options.onError(error);
      else console.error('event store subscription:', error instanceof Error ? error.message : String(error));
    } catch {
      // a failing error listener must not take the subscription's loop down with it
    }
  }
}
