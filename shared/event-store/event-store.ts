// The event store port. Every adapter (PostgreSQL, EventStoreDB) passes the same contract suite
// in test/event-store/contract.ts.

/**
 * A position in the store's global order. Compared lexicographically (commit, then prepare).
 * PostgreSQL adapter: commit = id of the writing transaction (xid8), prepare = global sequence.
 * EventStoreDB adapter: the $all commit and prepare positions.
 */
export interface Position {
  readonly commit: bigint;
  readonly prepare: bigint;
}

export const START: Position = Object.freeze({ commit: 0n, prepare: 0n });

export function comparePositions(a: Position, b: Position): -1 | 0 | 1 {
  if (a.commit !== b.commit) return a.commit < b.commit ? -1 : 1;
  if (a.prepare !== b.prepare) return a.prepare < b.prepare ? -1 : 1;
  return 0;
}

export function positionToString(p: Position): string {
  return `${p.commit}/${p.prepare}`;
}

export function parsePosition(text: string): Position {
  const m = /^(\d+)\/(\d+)$/.exec(text);
  if (!m) throw new Error(`malformed position: ${text}`);
  return { commit: BigInt(m[1]!), prepare: BigInt(m[2]!) };
}

/** Who caused an event. Never carries a secret. */
export type Actor =
  | { readonly kind: 'user'; readonly id: number }
  | { readonly kind: 'apiKey'; readonly id: string; readonly userId: number }
  | { readonly kind: 'operator' }
  | { readonly kind: 'system'; readonly name: string };

export interface EventMetadata {
  readonly correlationId: string;
  readonly causationId: string | null;
  readonly actor: Actor;
  /** ISO 8601 time the fact happened. */
  readonly occurredAt: string;
  /** Version of the event type's JSON Schema the data was written with. */
  readonly schemaVersion: number;
}

/** What a caller hands to append. */
export interface NewEvent<T extends string = string, D = unknown> {
  readonly id: string; // UUID
  readonly type: T;
  readonly data: D;
  readonly metadata: EventMetadata;
}

export interface RecordedEvent<T extends string = string, D = unknown> extends NewEvent<T, D> {
  readonly streamName: string;
  /** 0-based position of the event in its stream. */
  readonly revision: number;
  readonly position: Position;
  readonly recordedAt: Date;
}

/** -1 style sentinels are avoided: a stream revision is a number >= 0. */
export type ExpectedRevision = 'no_stream' | 'any' | number;

/** One stream's part of a multi-stream append (EventStore.appendToStreams). */
export interface StreamAppend {
  readonly streamName: string;
  readonly events: readonly NewEvent[];
  readonly expected: ExpectedRevision;
}

export interface AppendResult {
  /** Revision of the last appended event. */
  readonly nextExpectedRevision: number;
  /** Global position of the last appended event. */
  readonly position: Position;
}

export class WrongExpectedVersion extends Error {
  constructor(
    readonly streamName: string,
    readonly expected: ExpectedRevision,
    readonly actual: number | 'no_stream',
  ) {
    super(`wrong expected version on ${streamName}: expected ${String(expected)}, actual ${String(actual)}`);
    this.name = 'WrongExpectedVersion';
  }
}

export interface ReadStreamOptions {
  /** First revision to read (inclusive) when forwards; default 0. */
  readonly fromRevision?: number;
  readonly direction?: 'forwards' | 'backwards';
  readonly maxCount?: number;
}

export interface StreamRead {
  readonly streamName: string;
  /** First revision to read (inclusive); default 0. */
  readonly fromRevision?: number;
}

export interface ReadAllOptions {
  /** Exclusive: events strictly after this position. Default START (everything). */
  readonly after?: Position;
  readonly maxCount?: number;
}

export interface Subscription {
  /** Resolves once the subscription has stopped and its handler will not be called again. */
  stop(): Promise<void>;
}

export interface SubscribeOptions {
  /** Exclusive start: events strictly after this checkpoint. */
  readonly after: Position;
  /** Handles a batch in global order; the subscription waits for it before fetching more. */
  readonly onEvents: (events: readonly RecordedEvent[]) => Promise<void>;
  readonly onError?: (error: unknown) => void;
  readonly batchSize?: number;
}

export interface EventStore {
  /** Appends atomically; throws WrongExpectedVersion when the stream is not at `expected`. */
  appendToStream(streamName: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult>;
  /**
   * Appends to several streams in as few round trips as the store can: each append with its own
   * expected revision and its own outcome, exactly what appendToStream would answer it (outcome i
   * is append i's; a stream named twice is appended in order). Not atomic across streams. Optional:
   * a store without it (EventStoreDB writes one stream per call) is given the appends one by one
   * by appendToStreams() in multi-stream-append.ts.
   */
  appendToStreams?(appends: readonly StreamAppend[]): Promise<Array<PromiseSettledResult<AppendResult>>>;
  /** Empty array for a stream that does not exist. */
  readStream(streamName: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  /**
   * Several streams forwards, each from its own revision, in one call: what a command reads
   * before it decides (its stream and the streams it takes as input). Result i is stream i.
   */
  readStreams(requests: readonly StreamRead[]): Promise<RecordedEvent[][]>;
  /** Events in global order that no reader can later find a gap before. */
  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]>;
  /** Catch-up subscription to all events after a checkpoint; never skips or repeats an event. */
  subscribeToAll(options: SubscribeOptions): Subscription;
  /** Position of the newest event visible to readAll, or START. */
  headPosition(): Promise<Position>;
  /**
   * Names this store's log, `<adapter>:<uuid>`, created on first use and kept in the store itself:
   * a position means something only in the log it came from, so whoever keeps checkpoints keeps
   * this beside them (projections/checkpoint-store-identity.ts).
   */
  identity(): Promise<string>;
  close(): Promise<void>;
}
