import { randomUUID } from 'node:crypto';
import type { Decider, EventShape } from '../domain/decider.js';
import type { Actor, AppendResult, EventStore, NewEvent, RecordedEvent } from './event-store.js';
import { WrongExpectedVersion } from './event-store.js';
import { schemaVersionOf } from '../domain/event-schemas.js';

/** Who asked, and why: becomes every appended event's metadata. */
export interface CommandContext {
  readonly correlationId: string;
  readonly causationId?: string | null;
  readonly actor: Actor;
  readonly now: Date;
}

export interface HandleResult<Event extends EventShape> extends AppendResult {
  readonly events: readonly Event[];
}

interface CachedState {
  readonly revision: number;
  readonly state: unknown;
}

// Folded state is only meaningful for the evolve that folded it, and one stream can be folded by
// several deciders (its own, and others that read it as input): cache entries are keyed by both.
const evolveIds = new WeakMap<object, number>();
let nextEvolveId = 0;
function cacheKey(streamName: string, evolve: object): string {
  let id = evolveIds.get(evolve);
  if (id === undefined) evolveIds.set(evolve, (id = nextEvolveId++));
  return `${id}:${streamName}`;
}

const MAX_ATTEMPTS = 8;

/**
 * The one command handler: load the stream, fold it, decide, append with the revision read.
 * A lost race (WrongExpectedVersion) re-reads and decides again, so invariants are decided on
 * the state that is actually stored. Commands on one stream are serialised in-process, which
 * removes conflicts between requests of this process; other processes are still held off by
 * the expected revision. Folded state is cached per stream and only the events written after
 * the cached revision are read, so long streams (a busy month of invites) stay cheap.
 */
export class CommandHandler {
  private readonly cache = new Map<string, CachedState>();
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(
    private readonly store: EventStore,
    private readonly maxCachedStreams = 10_000,
    /** The schema version stamped on new events; the domain catalogue's unless a test brings its own events. */
    private readonly versionOf: (type: string) => number = schemaVersionOf,
  ) {}

  handle<Command, Event extends EventShape, State>(
    streamName: string,
    decider: Decider<Command, Event, State>,
    command: Command,
    context: CommandContext,
  ): Promise<HandleResult<Event>> {
    return this.serialised(streamName, () => this.run(streamName, decider, command, context));
  }

  /** Reads a stream's current state through the same cache, for deciders that need another stream as input. */
  async load<Event extends EventShape, State>(
    streamName: string,
    decider: Pick<Decider<unknown, Event, State>, 'initialState' | 'evolve'>,
  ): Promise<{ state: State; revision: number | 'no_stream' }> {
    const key = cacheKey(streamName, decider.evolve);
    const cached = this.cache.get(key);
    const from = cached ? cached.revision + 1 : 0;
    const events = await this.store.readStream(streamName, { fromRevision: from });
    let state = (cached ? cached.state : decider.initialState()) as State;
    for (const e of events) state = decider.evolve(state, { type: e.type, data: e.data } as Event);
    const last = events.at(-1);
    const revision = last ? last.revision : cached ? cached.revision : 'no_stream';
    if (revision !== 'no_stream') this.remember(key, { revision, state });
    return { state, revision };
  }

  private async run<Command, Event extends EventShape, State>(
    streamName: string,
    decider: Decider<Command, Event, State>,
    command: Command,
    context: CommandContext,
  ): Promise<HandleResult<Event>> {
    for (let attempt = 1; ; attempt++) {
      const { state, revision } = await this.load(streamName, decider);
      const events = decider.decide(command, state);
      if (events.length === 0) {
        return { events, nextExpectedRevision: revision === 'no_stream' ? -1 : revision, position: { commit: 0n, prepare: 0n } };
      }
      try {
        const result = await this.store.appendToStream(streamName, events.map((e) => toNewEvent(e, context, this.versionOf)), revision);
        let next = state;
        for (const e of events) next = decider.evolve(next, e);
        this.remember(cacheKey(streamName, decider.evolve), { revision: result.nextExpectedRevision, state: next });
        return { ...result, events };
      } catch (error) {
        if (!(error instanceof WrongExpectedVersion) || attempt >= MAX_ATTEMPTS) throw error;
        // The cached state stays true at its revision, so the next load reads only what the winner
        // appended; only a stream that went backwards (deleted by an operator) is folded again.
        const actual = error.actual;
        if (actual === 'no_stream' || (revision !== 'no_stream' && actual < revision)) {
          this.cache.delete(cacheKey(streamName, decider.evolve));
        }
      }
    }
  }

  private remember(key: string, entry: CachedState): void {
    this.cache.delete(key);
    this.cache.set(key, entry);
    if (this.cache.size > this.maxCachedStreams) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
  }

  private serialised<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(key) ?? Promise.resolve();
    const next = previous.then(work, work);
    const tail = next.catch(() => undefined);
    this.queues.set(key, tail);
    void tail.then(() => {
      if (this.queues.get(key) === tail) this.queues.delete(key);
    });
    return next;
  }
}

export function toNewEvent(
  event: EventShape,
  context: CommandContext,
  versionOf: (type: string) => number = schemaVersionOf,
): NewEvent {
  return {
    id: randomUUID(),
    type: event.type,
    data: event.data,
    metadata: {
      correlationId: context.correlationId,
      causationId: context.causationId ?? null,
      actor: context.actor,
      occurredAt: context.now.toISOString(),
      schemaVersion: versionOf(event.type),
    },
  };
}

export type { RecordedEvent };
