import { randomUUID } from 'node:crypto';
import type { Decider, EventShape } from '../domain/decider.js';
import type { Actor, AppendResult, EventStore, NewEvent, Position, RecordedEvent, StreamAppend, StreamRead } from './event-store.js';
import { START, WrongExpectedVersion } from './event-store.js';
import { schemaVersionOf } from '../domain/event-schemas.js';
import { batchPerTurn } from '../db/turn-batch.js';
import { InvalidEventError } from './validating-event-store.js';
import { appendToStreams } from './multi-stream-append.js';

/** Who asked, and why: becomes every appended event's metadata. */
export interface CommandContext {
  readonly correlationId: string;
  readonly causationId?: string | null;
  readonly actor: Actor;
  readonly now: Date;
}

export interface HandleResult<Event extends EventShape, State = unknown> extends AppendResult {
  readonly events: readonly Event[];
  /** The stream's state right after this command's events (what a caller reads the unchanged facts from). */
  readonly state: State;
}

interface CachedState {
  readonly revision: number;
  readonly state: unknown;
  /** When the state was last known to be the stream's latest (read, or appended by this process). */
  readonly knownAt: number;
}

/** A stream's folded state and the revision it was folded to. */
export interface StreamState<State> {
  readonly state: State;
  readonly revision: number | 'no_stream';
}

/** One command of handleMany, on a stream of its own. */
export interface StreamCommand<Command, State> {
  readonly streamName: string;
  readonly command: Command;
  /** The stream as the caller read it (loadMany); omitted for a stream the caller knows is new (a fresh random id). */
  readonly read?: StreamState<State>;
}

export interface HandleOptions<State> {
  /**
   * The stream as the caller has just read it (to act on it before deciding, as the delivery
   * worker does before it sends): the first attempt decides on it without another read, and the
   * append's expected revision proves it still current (else the usual lost-race path reads).
   */
  readonly known?: { readonly state: State; readonly revision: number | 'no_stream' };
  /**
   * The caller knows the stream is new (named by a random id it made, as a token family is): the
   * first attempt decides on the initial state without a read, and the append's expected
   * no_stream proves it (else the usual lost-race path reads). Cached like any stream it writes.
   */
  readonly newStream?: boolean;
}

export interface LoadOptions {
  /**
   * Serve the cached state without a read when it was known current at most this long ago. Only
   * for reads that tolerate another process's append being seen that much later: this process's
   * own appends update the cache at once.
   */
  readonly maxStalenessMs?: number;
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

// Each lost race means another writer got its events in, so retrying is progress; a short random
// pause from the third attempt on keeps processes that collide from colliding again in step.
const MAX_ATTEMPTS = 16;
const MAX_RETRY_PAUSE_MS = 20;
/** Commands on one stream decided together and written in one append, at most. */
const MAX_BATCH = 64;

interface Pending {
  readonly decider: Decider<unknown, EventShape, unknown>;
  readonly command: unknown;
  readonly context: CommandContext;
  readonly known?: { readonly state: unknown; readonly revision: number | 'no_stream' };
  /** `known` is the initial state of a stream the caller knows is new (cached once written). */
  readonly knownNew: boolean;
  readonly resolve: (result: HandleResult<EventShape, unknown>) => void;
  readonly reject: (error: unknown) => void;
}

interface Outcome {
  readonly pending: Pending;
  readonly events: readonly EventShape[];
  /** Revision of the stream after this command's events (its own, not the batch's last). */
  readonly revisionAfter: number;
  /** State after this command's events. */
  readonly state: unknown;
  readonly error?: unknown;
}

/**
 * The one command handler: load the stream, fold it, decide, append with the revision read.
 * A lost race (WrongExpectedVersion) re-reads and decides again, so invariants are decided on
 * the state that is actually stored. Folded state is cached per stream and only the events
 * written after the cached revision are read, so long streams (a busy month of invites) stay cheap.
 *
 * Commands on one stream are queued in-process: this removes conflicts between requests of this
 * process (other processes are still held off by the expected revision), and the commands that
 * queue up while an append is in flight are decided one after another on the evolving state and
 * written in one append, so a busy stream costs one round trip per batch, not per command. Each
 * command still gets its own outcome: a rejected one contributes no events to the append.
 */
export class CommandHandler {
  private readonly cache = new Map<string, CachedState>();
  private readonly queues = new Map<string, Pending[]>();
  /**
   * Reads one stream, together with every other read asked for in the same event-loop turn: a
   * command that loads its stream and its input streams side by side costs one round trip, not
   * one each, and so do concurrent requests.
   */
  private readonly read: (request: StreamRead) => Promise<RecordedEvent[]>;

  constructor(
    private readonly store: EventStore,
    private readonly maxCachedStreams = 10_000,
    /** The schema version stamped on new events; the domain catalogue's unless a test brings its own events. */
    private readonly versionOf: (type: string) => number = schemaVersionOf,
  ) {
    this.read = batchPerTurn((requests: StreamRead[]) => this.store.readStreams(requests));
  }

  handle<Command, Event extends EventShape, State>(
    streamName: string,
    decider: Decider<Command, Event, State>,
    command: Command,
    context: CommandContext,
    options: HandleOptions<State> = {},
  ): Promise<HandleResult<Event, State>> {
    return new Promise<HandleResult<Event, State>>((resolve, reject) => {
      const pending: Pending = {
        decider: decider as unknown as Decider<unknown, EventShape, unknown>,
        command,
        context,
        known: options.newStream ? { state: decider.initialState(), revision: 'no_stream' } : options.known,
        knownNew: options.newStream === true,
        resolve: resolve as (result: HandleResult<EventShape, unknown>) => void,
        reject,
      };
      const queue = this.queues.get(streamName);
      if (queue) {
        queue.push(pending);
        return;
      }
      this.queues.set(streamName, [pending]);
      void this.drain(streamName);
    });
  }

  /** Reads a stream's current state through the same cache, for deciders that need another stream as input. */
  async load<Event extends EventShape, State>(
    streamName: string,
    decider: Pick<Decider<unknown, Event, State>, 'initialState' | 'evolve'>,
    options: LoadOptions = {},
  ): Promise<{ state: State; revision: number | 'no_stream' }> {
    const key = cacheKey(streamName, decider.evolve);
    const cached = this.cache.get(key);
    if (cached && options.maxStalenessMs !== undefined && Date.now() - cached.knownAt <= options.maxStalenessMs) {
      return { state: cached.state as State, revision: cached.revision };
    }
    const readAt = Date.now();
    const from = cached ? cached.revision + 1 : 0;
    const events = await this.read({ streamName, fromRevision: from });
    let state = (cached ? cached.state : decider.initialState()) as State;
    for (const e of events) state = decider.evolve(state, { type: e.type, data: e.data } as Event);
    const last = events.at(-1);
    const revision = last ? last.revision : cached ? cached.revision : 'no_stream';
    if (revision !== 'no_stream') this.remember(key, { revision, state, knownAt: readAt });
    return { state, revision };
  }

  /**
   * Many streams' current states in one read, for a bulk use case that decides on all of them (the
   * member import). Not cached: thousands of streams read once would push out the ones requests
   * keep reading. A stream already cached is read from its cached revision on, and kept current.
   */
  async loadMany<Event extends EventShape, State>(
    streamNames: readonly string[],
    decider: Pick<Decider<unknown, Event, State>, 'initialState' | 'evolve'>,
  ): Promise<Array<StreamState<State>>> {
    if (streamNames.length === 0) return [];
    const keys = streamNames.map((name) => cacheKey(name, decider.evolve));
    const cached = keys.map((key) => this.cache.get(key));
    const readAt = Date.now();
    const read = await this.store.readStreams(streamNames.map((streamName, i) => ({ streamName, fromRevision: (cached[i]?.revision ?? -1) + 1 })));
    return read.map((events, i) => {
      const before = cached[i];
      let state = (before ? before.state : decider.initialState()) as State;
      for (const e of events) state = decider.evolve(state, { type: e.type, data: e.data } as Event);
      const revision = events.at(-1)?.revision ?? before?.revision ?? 'no_stream';
      if (before && revision !== 'no_stream') this.remember(keys[i]!, { revision, state, knownAt: readAt });
      return { state, revision };
    });
  }

  /**
   * Many commands, one per stream, for a bulk use case: each decided on the state its caller read
   * (no read here) and all appended together (appendToStreams: a few round trips for thousands),
   * each with the revision it was decided on. A stream that moved since (WrongExpectedVersion)
   * goes through handle(), which reads, decides again and retries as for any lost race. Outcomes
   * in order; a rejected command (a domain error, an invalid event) is its own outcome only.
   */
  async handleMany<Command, Event extends EventShape, State>(
    decider: Decider<Command, Event, State>,
    commands: ReadonlyArray<StreamCommand<Command, State>>,
    context: CommandContext,
  ): Promise<Array<PromiseSettledResult<HandleResult<Event, State>>>> {
    const outcomes: Array<PromiseSettledResult<HandleResult<Event, State>>> = new Array(commands.length);
    const appends: StreamAppend[] = [];
    const decided: Array<{ readonly index: number; readonly events: Event[]; readonly state: State }> = [];
    const streams = new Set<string>();
    for (const [index, { streamName, command, read }] of commands.entries()) {
      if (streams.has(streamName)) throw new RangeError(`handleMany takes one command per stream; ${streamName} has two`);
      streams.add(streamName);
      const { state, revision } = read ?? { state: decider.initialState(), revision: 'no_stream' as const };
      let events: Event[];
      try {
        events = decider.decide(command, state);
      } catch (error) {
        outcomes[index] = { status: 'rejected', reason: error };
        continue;
      }
      if (events.length === 0) {
        const nextExpectedRevision = revision === 'no_stream' ? -1 : revision;
        outcomes[index] = { status: 'fulfilled', value: { events, state, nextExpectedRevision, position: START } };
        continue;
      }
      let next = state;
      for (const e of events) next = decider.evolve(next, e);
      appends.push({ streamName, events: events.map((e) => toNewEvent(e, context, this.versionOf)), expected: revision });
      decided.push({ index, events, state: next });
    }
    const written = await appendToStreams(this.store, appends);
    const again: Array<Promise<void>> = [];
    for (const [j, outcome] of written.entries()) {
      const { index, events, state } = decided[j]!;
      const { streamName, command } = commands[index]!;
      if (outcome.status === 'fulfilled') {
        const key = cacheKey(streamName, decider.evolve);
        if (this.cache.has(key)) this.remember(key, { revision: outcome.value.nextExpectedRevision, state, knownAt: Date.now() });
        outcomes[index] = { status: 'fulfilled', value: { ...outcome.value, events, state } };
      } else if (outcome.reason instanceof WrongExpectedVersion) {
        again.push(
          this.handle(streamName, decider, command, context).then(
            (value) => void (outcomes[index] = { status: 'fulfilled', value }),
            (reason: unknown) => void (outcomes[index] = { status: 'rejected', reason }),
          ),
        );
      } else {
        outcomes[index] = outcome;
      }
    }
    await Promise.all(again);
    return outcomes;
  }

  /** Runs the stream's queue until it is empty; one drain per stream at a time. */
  private async drain(streamName: string): Promise<void> {
    const queue = this.queues.get(streamName)!;
    while (queue.length > 0) {
      // A batch shares one fold, so it takes the queued commands of the first one's decider.
      const decider = queue[0]!.decider;
      const batch: Pending[] = [];
      for (let i = 0; i < queue.length && batch.length < MAX_BATCH; ) {
        if (queue[i]!.decider === decider) batch.push(...queue.splice(i, 1));
        else i++;
      }
      try {
        settle(await this.run(streamName, decider, batch));
      } catch (error) {
        if (batch.length > 1 && error instanceof InvalidEventError && error.operation === 'append') {
          // Refused before anything was written: one command's events (a bug, or input no check
          // caught) must not fail the others decided with it, so each is tried alone.
          for (const pending of batch) await this.run(streamName, decider, [pending]).then(settle, pending.reject);
        } else {
          for (const pending of batch) pending.reject(error);
        }
      }
    }
    this.queues.delete(streamName);
  }

  private async run(
    streamName: string,
    decider: Decider<unknown, EventShape, unknown>,
    batch: readonly Pending[],
  ): Promise<Array<Outcome & { position: Position }>> {
    for (let attempt = 1; ; attempt++) {
      // Optimistic first attempt: a cached state is decided on without a read, and the append's
      // expected revision proves it was current (else the usual lost-race path reads what is new).
      // What an append cannot prove, a rejection or nothing to append, is decided again on a read.
      // A state the caller just read counts as cached (it serves the command it came with alone).
      const known = batch.length === 1 ? batch[0]!.known : undefined;
      const cached = attempt === 1 ? (known ?? this.cache.get(cacheKey(streamName, decider.evolve))) : undefined;
      const { state, revision } = cached ?? (await this.load(streamName, decider));
      let next = state;
      let revisionAfter = revision === 'no_stream' ? -1 : revision;
      const outcomes: Outcome[] = [];
      const toAppend: NewEvent[] = [];
      for (const pending of batch) {
        let events: EventShape[];
        try {
          events = decider.decide(pending.command, next);
        } catch (error) {
          outcomes.push({ pending, events: [], revisionAfter, state: next, error });
          continue;
        }
        for (const e of events) next = decider.evolve(next, e);
        revisionAfter += events.length;
        outcomes.push({ pending, events, revisionAfter, state: next });
        for (const e of events) toAppend.push(toNewEvent(e, pending.context, this.versionOf));
      }
      if (cached && outcomes.some((o) => o.error !== undefined || o.events.length === 0)) continue;
      if (toAppend.length === 0) return outcomes.map((o) => ({ ...o, position: START }));
      try {
        const result = await this.store.appendToStream(streamName, toAppend, revision);
        const key = cacheKey(streamName, decider.evolve);
        // A stream the caller read itself is not cached on that account: streams written once or
        // twice (a delivery's) would push out the ones requests keep reading.
        if (!(cached && cached === known) || batch[0]!.knownNew || this.cache.has(key)) this.remember(key, { revision: result.nextExpectedRevision, state: next, knownAt: Date.now() });
        // Every command of the batch is durable at the batch's last position.
        return outcomes.map((o) => ({ ...o, position: o.events.length > 0 ? result.position : START }));
      } catch (error) {
        if (!(error instanceof WrongExpectedVersion) || attempt >= MAX_ATTEMPTS) throw error;
        if (attempt >= 2) await new Promise((resolve) => setTimeout(resolve, Math.random() * MAX_RETRY_PAUSE_MS));
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
}

function settle(outcomes: ReadonlyArray<Outcome & { position: Position }>): void {
  for (const outcome of outcomes) {
    if (outcome.error !== undefined) {
      outcome.pending.reject(outcome.error);
    } else {
      outcome.pending.resolve({
        events: outcome.events,
        nextExpectedRevision: outcome.revisionAfter,
        position: outcome.position,
        state: outcome.state,
      });
    }
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
