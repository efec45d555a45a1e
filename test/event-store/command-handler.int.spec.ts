import { expect } from 'chai';
import type { Decider } from '../../shared/domain/decider.js';
import { ConflictError } from '../../shared/errors.js';
import { CommandHandler, type CommandContext } from '../../shared/event-store/command-handler.js';
import type {
  AppendResult,
  EventStore,
  ExpectedRevision,
  NewEvent,
  ReadStreamOptions,
  RecordedEvent,
} from '../../shared/event-store/event-store.js';
import { createPostgresEventStore } from '../../shared/event-store/postgres-event-store.js';
import { InvalidEventError, ValidatingEventStore } from '../../shared/event-store/validating-event-store.js';
import { migratedDatabaseUrl } from '../support/database.js';
import { uniqueStream } from './contract.js';

// A list that holds at most ten items: the invariant must hold however commands interleave.
type AddItem = { type: 'AddItem'; item: string };
type ItemAdded = { type: 'ItemAdded'; data: { item: string; index: number } };
type ListState = { items: readonly string[] };
const CAPACITY = 10;

const listDecider: Decider<AddItem, ItemAdded, ListState> = {
  initialState: () => ({ items: [] }),
  evolve: (state, event) => ({ items: [...state.items, event.data.item] }),
  decide: (command, state) => {
    if (state.items.length >= CAPACITY) throw new ConflictError('the list is full');
    return [{ type: 'ItemAdded', data: { item: command.item, index: state.items.length } }];
  },
};

const context = (): CommandContext => ({
  correlationId: 'test',
  actor: { kind: 'system', name: 'command-handler-test' },
  now: new Date(),
});

/** Delegates to a real store and records what the handler asked of it. */
class RecordingStore implements EventStore {
  readonly reads: Array<{ streamName: string; fromRevision: number | undefined }> = [];
  appends = 0;
  conflicts = 0;
  /** Calls of readStreams (each is one round trip for all its streams). */
  streamReads = 0;
  /** Runs before the next append only: lets a test slip another process's write in between read and append. */
  beforeNextAppend: (() => Promise<unknown>) | null = null;
  /** Called once the next stream read has its result. */
  afterNextRead: (() => void) | null = null;
  constructor(private readonly inner: EventStore) {}
  async appendToStream(streamName: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    this.appends++;
    const before = this.beforeNextAppend;
    this.beforeNextAppend = null;
    if (before) await before();
    try {
      return await this.inner.appendToStream(streamName, events, expected);
    } catch (error) {
      this.conflicts++;
      throw error;
    }
  }
  readStream(streamName: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    this.reads.push({ streamName, fromRevision: options?.fromRevision });
    return this.inner.readStream(streamName, options);
  }
  async readStreams(requests: Parameters<EventStore['readStreams']>[0]): Promise<RecordedEvent[][]> {
    this.streamReads++;
    for (const r of requests) this.reads.push({ streamName: r.streamName, fromRevision: r.fromRevision });
    const result = await this.inner.readStreams(requests);
    const after = this.afterNextRead;
    this.afterNextRead = null;
    after?.();
    return result;
  }
  readAll = (...args: Parameters<EventStore['readAll']>) => this.inner.readAll(...args);
  subscribeToAll = (...args: Parameters<EventStore['subscribeToAll']>) => this.inner.subscribeToAll(...args);
  headPosition = () => this.inner.headPosition();
  identity = () => this.inner.identity();
  close = () => this.inner.close();
}

describe('command handler over the PostgreSQL event store', function () {
  this.timeout(60_000);
  let url = '';
  const stores: EventStore[] = [];

  before(async () => {
    url = await migratedDatabaseUrl('command_handler');
  });

  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
  });

  /** A handler over its own pool: another process, as far as the database can tell. */
  function process(): { handler: CommandHandler; store: RecordingStore } {
    const store = new RecordingStore(createPostgresEventStore(url, { maxConnections: 4 }));
    stores.push(store);
    return { handler: new CommandHandler(store, 10_000, () => 1), store };
  }

  it('keeps the invariant under 20 concurrent commands from two processes: exactly 10 succeed', async () => {
    const stream = uniqueStream('list');
    const [one, two] = [process(), process()];
    // Force the race the expected revision has to settle: process two reads the empty stream,
    // process one appends, and only then does process two append, on the state it read.
    let twoRead!: () => void;
    const twoHasRead = new Promise<void>((resolve) => (twoRead = resolve));
    let releaseTwo!: () => void;
    const oneHasAppended = new Promise<void>((resolve) => (releaseTwo = resolve));
    two.store.afterNextRead = twoRead;
    one.store.beforeNextAppend = () => twoHasRead;
    two.store.beforeNextAppend = () => oneHasAppended;
    const commands = Array.from({ length: 20 }, (_, i) =>
      (i % 2 ? two : one).handler.handle(stream, listDecider, { type: 'AddItem', item: `item-${i}` }, context()),
    );
    void commands[0]!.finally(releaseTwo);
    const results = await Promise.allSettled(commands);
    const succeeded = results.filter((r) => r.status === 'fulfilled');
    const failed = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    expect(succeeded).to.have.length(CAPACITY);
    expect(failed).to.have.length(20 - CAPACITY);
    for (const reason of failed) expect(reason).to.be.instanceOf(ConflictError);

    const stored = await one.store.readStream(stream);
    expect(stored.map((e) => e.revision)).to.deep.equal([...Array(CAPACITY).keys()]);
    // Each event was decided on the state actually stored before it.
    expect(stored.map((e) => (e.data as ItemAdded['data']).index)).to.deep.equal([...Array(CAPACITY).keys()]);
    expect(new Set(stored.map((e) => (e.data as ItemAdded['data']).item)).size).to.equal(CAPACITY);
    // Process two lost its race and decided again on what process one had stored.
    expect(two.store.conflicts).to.be.greaterThan(0);
  });

  it('writes the commands queued on one stream during an append in one append, each with its own outcome', async () => {
    const stream = uniqueStream('list');
    const { handler, store } = process();
    await handler.handle(stream, listDecider, { type: 'AddItem', item: 'first' }, context());
    // Nine more than fit: queued together behind one append, the last ones must still be refused.
    let release!: () => void;
    store.beforeNextAppend = () => new Promise<void>((resolve) => (release = resolve));
    const as = (item: string) => ({ ...context(), correlationId: `request-${item}` });
    const head = handler.handle(stream, listDecider, { type: 'AddItem', item: 'head' }, as('head'));
    const queued = Array.from({ length: 12 }, (_, i) => handler.handle(stream, listDecider, { type: 'AddItem', item: `q${i}` }, as(`q${i}`)));
    await new Promise((resolve) => setTimeout(resolve, 50));
    store.appends = 0;
    release();
    const results = await Promise.allSettled([head, ...queued]);

    // One append for the whole queue behind the held one.
    expect(store.appends).to.equal(1);
    const fulfilled = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const rejected = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    expect(fulfilled).to.have.length(CAPACITY - 1);
    expect(rejected).to.have.length(13 - (CAPACITY - 1));
    for (const reason of rejected) expect(reason).to.be.instanceOf(ConflictError);
    // Each command learns the revision its own event landed at, in queue order.
    expect(fulfilled.map((r) => r.nextExpectedRevision)).to.deep.equal([...Array(CAPACITY - 1).keys()].map((i) => i + 1));
    expect(fulfilled.map((r) => (r.events[0] as ItemAdded).data.item)).to.deep.equal(['head', ...Array.from({ length: 8 }, (_, i) => `q${i}`)]);

    const stored = await store.readStream(stream);
    expect(stored.map((e) => (e.data as ItemAdded['data']).index)).to.deep.equal([...Array(CAPACITY).keys()]);
    // Each event keeps the metadata of the request that caused it.
    for (const e of stored.slice(1)) expect(e.metadata.correlationId).to.equal(`request-${(e.data as ItemAdded['data']).item}`);
  });

  it('fails only the command whose events are invalid when commands decided together are refused before the append', async () => {
    const stream = uniqueStream('list');
    // Items named "bad" fail the schema, as an event a bug (or an unchecked input) shaped wrongly would.
    const schemas = {
      validate: (_type: string, _version: number, data: unknown) => {
        if ((data as ItemAdded['data']).item === 'bad') throw new Error('item must not be "bad"');
      },
      upcast: (_type: string, schemaVersion: number, data: unknown) => ({ schemaVersion, data }),
    };
    const recording = new RecordingStore(new ValidatingEventStore(createPostgresEventStore(url, { maxConnections: 4 }), schemas));
    stores.push(recording);
    const handler = new CommandHandler(recording, 10_000, () => 1);
    await handler.handle(stream, listDecider, { type: 'AddItem', item: 'first' }, context());
    let release!: () => void;
    recording.beforeNextAppend = () => new Promise<void>((resolve) => (release = resolve));
    const head = handler.handle(stream, listDecider, { type: 'AddItem', item: 'head' }, context());
    const queued = ['a', 'bad', 'b'].map((item) => handler.handle(stream, listDecider, { type: 'AddItem', item }, context()));
    await new Promise((resolve) => setTimeout(resolve, 50));
    release();
    const results = await Promise.allSettled([head, ...queued]);
    expect(results.map((r) => r.status)).to.deep.equal(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect((results[2] as PromiseRejectedResult).reason).to.be.instanceOf(InvalidEventError);
    const stored = await recording.readStream(stream);
    expect(stored.map((e) => (e.data as ItemAdded['data']).item)).to.deep.equal(['first', 'head', 'a', 'b']);
    expect(stored.map((e) => (e.data as ItemAdded['data']).index)).to.deep.equal([0, 1, 2, 3]);
  });

  it('reads the streams loaded side by side in one round trip', async () => {
    const { handler, store } = process();
    const streams = [uniqueStream('list'), uniqueStream('list'), uniqueStream('list')];
    await handler.handle(streams[0]!, listDecider, { type: 'AddItem', item: 'x' }, context());
    store.streamReads = 0;
    store.reads.length = 0;
    const loaded = await Promise.all(streams.map((s) => handler.load(s, listDecider)));
    expect(store.streamReads).to.equal(1);
    expect(store.reads.map((r) => r.streamName)).to.deep.equal(streams);
    expect(loaded.map((l) => l.state.items)).to.deep.equal([['x'], [], []]);
    expect(loaded.map((l) => l.revision)).to.deep.equal([0, 'no_stream', 'no_stream']);
  });

  it('decides on its cached state without a read; another process\'s appends are caught by the revision, then only they are read', async () => {
    const stream = uniqueStream('list');
    const [one, two] = [process(), process()];
    await one.handler.handle(stream, listDecider, { type: 'AddItem', item: 'a' }, context());
    await two.handler.handle(stream, listDecider, { type: 'AddItem', item: 'b' }, context());
    await two.handler.handle(stream, listDecider, { type: 'AddItem', item: 'c' }, context());

    one.store.reads.length = 0;
    const result = await one.handler.handle(stream, listDecider, { type: 'AddItem', item: 'd' }, context());
    expect(result.events).to.deep.equal([{ type: 'ItemAdded', data: { item: 'd', index: 3 } }]);
    expect(result.nextExpectedRevision).to.equal(3);
    // The optimistic append at revision 0 lost; then only what two appended was read.
    expect(one.store.conflicts).to.equal(1);
    expect(one.store.reads).to.deep.equal([{ streamName: stream, fromRevision: 1 }]); // not from 0
    expect(result.state.items).to.deep.equal(['a', 'b', 'c', 'd']);

    // When nobody else wrote, the next command costs no read at all.
    one.store.reads.length = 0;
    await one.handler.handle(stream, listDecider, { type: 'AddItem', item: 'e' }, context());
    expect(one.store.reads).to.deep.equal([]);
    expect(one.store.conflicts).to.equal(1);

    const { state, revision } = await one.handler.load(stream, listDecider);
    expect(state.items).to.deep.equal(['a', 'b', 'c', 'd', 'e']);
    expect(revision).to.equal(4);
  });

  it('decides a command on a stream the caller knows is new without a read, caches it, and reads when it existed after all', async () => {
    const { handler, store } = process();
    const fresh = uniqueStream('list');
    const first = await handler.handle(fresh, listDecider, { type: 'AddItem', item: 'a' }, context(), { newStream: true });
    expect(first.nextExpectedRevision).to.equal(0);
    expect(store.reads).to.deep.equal([]);
    await handler.handle(fresh, listDecider, { type: 'AddItem', item: 'b' }, context());
    expect(store.reads, 'its state was cached').to.deep.equal([]);

    // Not new after all (another process wrote first): the expected no_stream loses, it reads and decides again.
    const taken = uniqueStream('list');
    const other = process();
    await other.handler.handle(taken, listDecider, { type: 'AddItem', item: 'x' }, context());
    const result = await handler.handle(taken, listDecider, { type: 'AddItem', item: 'y' }, context(), { newStream: true });
    expect(store.conflicts).to.equal(1);
    expect(store.reads).to.deep.equal([{ streamName: taken, fromRevision: 0 }]);
    expect(result.state.items).to.deep.equal(['x', 'y']);
  });

  it('decides a rejection made on its cached state again on a fresh read, before answering', async () => {
    // A door that can only be closed when open: process one's cache says closed, but two opened it.
    type Door = { open: boolean };
    type DoorCommand = { type: 'Open' | 'Close' };
    type DoorEvent = { type: 'Opened' | 'Closed'; data: Record<string, never> };
    const door: Decider<DoorCommand, DoorEvent, Door> = {
      initialState: () => ({ open: false }),
      evolve: (_state, event) => ({ open: event.type === 'Opened' }),
      decide: (command, state) => {
        if ((command.type === 'Open') === state.open) throw new ConflictError(`already ${state.open ? 'open' : 'closed'}`);
        return [{ type: command.type === 'Open' ? 'Opened' : 'Closed', data: {} }];
      },
    };
    const stream = uniqueStream('door');
    const [one, two] = [process(), process()];
    await one.handler.handle(stream, door, { type: 'Open' }, context());
    await one.handler.handle(stream, door, { type: 'Close' }, context()); // one caches: closed
    await two.handler.handle(stream, door, { type: 'Open' }, context());

    one.store.reads.length = 0;
    const closed = await one.handler.handle(stream, door, { type: 'Close' }, context());
    expect(closed.events).to.deep.equal([{ type: 'Closed', data: {} }]);
    expect(one.store.reads).to.deep.equal([{ streamName: stream, fromRevision: 2 }]);
    // A rejection that holds on the fresh state is answered as one.
    let error: unknown = null;
    await one.handler.handle(stream, door, { type: 'Close' }, context()).catch((e: unknown) => (error = e));
    expect(error).to.be.instanceOf(ConflictError);
    expect((await one.store.readStream(stream)).map((e) => e.type)).to.deep.equal(['Opened', 'Closed', 'Opened', 'Closed']);
  });

  it('serves a state known current within maxStalenessMs without a read, and catches up once it is older', async () => {
    const stream = uniqueStream('list');
    const [one, two] = [process(), process()];
    await one.handler.handle(stream, listDecider, { type: 'AddItem', item: 'a' }, context());
    await two.handler.handle(stream, listDecider, { type: 'AddItem', item: 'b' }, context());

    // Its own append made the state known just now: no read, and the other process's item is not seen yet.
    one.store.reads.length = 0;
    const cached = await one.handler.load(stream, listDecider, { maxStalenessMs: 60_000 });
    expect(cached.state.items).to.deep.equal(['a']);
    expect(one.store.reads).to.deep.equal([]);

    // Without the option, or once the state is older than allowed, it reads (only what is new).
    await new Promise((r) => setTimeout(r, 30));
    const fresh = await one.handler.load(stream, listDecider, { maxStalenessMs: 10 });
    expect(fresh.state.items).to.deep.equal(['a', 'b']);
    expect(one.store.reads).to.deep.equal([{ streamName: stream, fromRevision: 1 }]);
    const plain = await one.handler.load(stream, listDecider);
    expect(plain.state.items).to.deep.equal(['a', 'b']);
    expect(one.store.reads).to.have.length(2);
  });

  it('after losing a race, decides again on the winner’s events without re-reading the whole stream', async () => {
    const stream = uniqueStream('list');
    const [one, two] = [process(), process()];
    await one.handler.handle(stream, listDecider, { type: 'AddItem', item: 'a' }, context()); // one caches revision 0

    // Between one's read and one's append, two appends: one's append loses and is decided again.
    one.store.beforeNextAppend = () => two.handler.handle(stream, listDecider, { type: 'AddItem', item: 'b' }, context());
    one.store.reads.length = 0;
    const result = await one.handler.handle(stream, listDecider, { type: 'AddItem', item: 'c' }, context());
    expect(one.store.conflicts).to.equal(1);
    expect(result.events).to.deep.equal([{ type: 'ItemAdded', data: { item: 'c', index: 2 } }]);
    expect(result.nextExpectedRevision).to.equal(2);
    // No read before the optimistic append; after losing, only what two appended.
    expect(one.store.reads.map((r) => r.fromRevision)).to.deep.equal([1]);
    expect((await one.store.readStream(stream)).map((e) => (e.data as ItemAdded['data']).item)).to.deep.equal(['a', 'b', 'c']);
  });

  it('does not share cached state between deciders folding the same stream', async () => {
    const stream = uniqueStream('list');
    const { handler } = process();
    await handler.handle(stream, listDecider, { type: 'AddItem', item: 'a' }, context());
    await handler.handle(stream, listDecider, { type: 'AddItem', item: 'b' }, context());
    const counter = {
      initialState: () => 0,
      evolve: (count: number) => count + 1,
    };
    const counted = await handler.load<ItemAdded, number>(stream, counter);
    expect(counted).to.deep.equal({ state: 2, revision: 1 });
    const listed = await handler.load(stream, listDecider);
    expect(listed.state.items).to.deep.equal(['a', 'b']);
  });
});
