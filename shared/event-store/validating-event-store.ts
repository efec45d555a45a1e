// Validates every event against its type's JSON Schema on the way in and on the way out, and
// upcasts events written with an older schema version on the way out (the log is never rewritten).
import type {
  AppendResult,
  EventStore,
  ExpectedRevision,
  NewEvent,
  Position,
  ReadAllOptions,
  ReadStreamOptions,
  StreamAppend,
  StreamRead,
  RecordedEvent,
  SubscribeOptions,
  Subscription,
} from './event-store.js';
import { appendToStreams } from './multi-stream-append.js';

/** What the decorator needs from the schema catalogue (shared/domain/event-schemas.ts). */
export interface EventSchemas {
  /** Throws when `data` is not valid for the type at that schema version, or the type/version is unknown. */
  validate(type: string, schemaVersion: number, data: unknown): void;
  /** Brings data written with `schemaVersion` to the current version; returns it unchanged when already current. */
  upcast(type: string, schemaVersion: number, data: unknown): { schemaVersion: number; data: unknown };
}

/** An event that does not match its schema: a bug in whoever wrote (or upcast) it, never the caller's input. */
export class InvalidEventError extends Error {
  constructor(
    readonly operation: 'append' | 'read',
    readonly eventId: string,
    readonly eventType: string,
    readonly schemaVersion: number,
    readonly streamName: string,
    reason: unknown,
  ) {
    super(
      `invalid ${eventType} v${schemaVersion} event ${eventId} on ${operation} (stream ${streamName}): ` +
        (reason instanceof Error ? reason.message : String(reason)),
      { cause: reason },
    );
    this.name = 'InvalidEventError';
  }
}

export class ValidatingEventStore implements EventStore {
  constructor(
    private readonly inner: EventStore,
    private readonly schemas: EventSchemas,
  ) {}

  /** The adapter underneath (storedEvents() below). */
  get stored(): EventStore {
    return this.inner;
  }

  async appendToStream(streamName: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    // All events are checked before any is written: one append is one atomic fact.
    for (const event of events) {
      this.check('append', streamName, event, event.metadata?.schemaVersion);
    }
    return this.inner.appendToStream(streamName, events, expected);
  }

  /** An append with an invalid event is refused on its own (InvalidEventError); the others are written. */
  async appendToStreams(appends: readonly StreamAppend[]): Promise<Array<PromiseSettledResult<AppendResult>>> {
    const outcomes: Array<PromiseSettledResult<AppendResult>> = new Array(appends.length);
    const valid: StreamAppend[] = [];
    const validAt: number[] = [];
    for (const [i, append] of appends.entries()) {
      try {
        for (const event of append.events) this.check('append', append.streamName, event, event.metadata?.schemaVersion);
        valid.push(append);
        validAt.push(i);
      } catch (error) {
        outcomes[i] = { status: 'rejected', reason: error };
      }
    }
    const written = await appendToStreams(this.inner, valid);
    for (const [j, outcome] of written.entries()) outcomes[validAt[j]!] = outcome;
    return outcomes;
  }

  async readStreams(requests: readonly StreamRead[]): Promise<RecordedEvent[][]> {
    return (await this.inner.readStreams(requests)).map((events) => events.map((e) => this.onRead(e)));
  }

  async readStream(streamName: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    return (await this.inner.readStream(streamName, options)).map((e) => this.onRead(e));
  }

  async readAll(options?: ReadAllOptions): Promise<RecordedEvent[]> {
    return (await this.inner.readAll(options)).map((e) => this.onRead(e));
  }

  subscribeToAll(options: SubscribeOptions): Subscription {
    // An invalid event fails the batch like a failing handler: reported, and the subscription ends
    // before the handler sees it, so a projection never applies it nor moves its checkpoint past it.
    return this.inner.subscribeToAll({
      ...options,
      onEvents: async (events) => options.onEvents(events.map((e) => this.onRead(e))),
    });
  }

  headPosition(): Promise<Position> {
    return this.inner.headPosition();
  }

  identity(): Promise<string> {
    return this.inner.identity();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  /** Validates the stored data at its stored version, then upcasts it (and checks the upcaster's output). */
  private onRead(event: RecordedEvent): RecordedEvent {
    const stored = event.metadata?.schemaVersion;
    this.check('read', event.streamName, event, stored);
    let current: { schemaVersion: number; data: unknown };
    try {
      current = this.schemas.upcast(event.type, stored, event.data);
    } catch (error) {
      throw new InvalidEventError('read', event.id, event.type, stored, event.streamName, error);
    }
    if (current.schemaVersion === stored && current.data === event.data) return event;
    this.check('read', event.streamName, { ...event, data: current.data }, current.schemaVersion);
    return { ...event, data: current.data, metadata: { ...event.metadata, schemaVersion: current.schemaVersion } };
  }

  private check(operation: 'append' | 'read', streamName: string, event: NewEvent, schemaVersion: number | undefined): void {
    try {
      if (!Number.isInteger(schemaVersion) || schemaVersion! < 1) {
        throw new Error(`metadata.schemaVersion must be an integer >= 1 (got ${String(schemaVersion)})`);
      }
      this.schemas.validate(event.type, schemaVersion!, event.data);
    } catch (error) {
      throw new InvalidEventError(operation, event.id, event.type, schemaVersion ?? NaN, streamName, error);
    }
  }
}

/**
 * The events exactly as stored, neither validated nor upcast: what the audit tree hashes (a
 * later upcaster must not change an old leaf, and a tampered row must be read to be reported).
 */
export function storedEvents(store: EventStore): EventStore {
  return store instanceof ValidatingEventStore ? store.stored : store;
}
