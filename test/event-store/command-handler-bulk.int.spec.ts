import { expect } from 'chai';
import type { Decider } from '../../shared/domain/decider.js';
import { ConflictError } from '../../shared/errors.js';
import { CommandHandler, type CommandContext, type HandleResult } from '../../shared/event-store/command-handler.js';
import { START, type EventStore, type StreamAppend, type StreamRead } from '../../shared/event-store/event-store.js';
import { createPostgresEventStore } from '../../shared/event-store/postgres-event-store.js';
import { migratedDatabaseUrl } from '../support/database.js';
import { newEvent, uniqueStream } from './contract.js';

// A list of at most two items; 'Keep' decides nothing.
type ListCommand = { type: 'Add'; item: string } | { type: 'Keep' };
type ItemAdded = { type: 'ItemAdded'; data: { item: string; index: number } };
type ListState = { items: readonly string[] };
const listDecider: Decider<ListCommand, ItemAdded, ListState> = {
  initialState: () => ({ items: [] }),
  evolve: (state, event) => ({ items: [...state.items, event.data.item] }),
  decide: (command, state) => {
    if (command.type === 'Keep') return [];
    if (state.items.length >= 2) throw new ConflictError('the list is full');
    return [{ type: 'ItemAdded', data: { item: command.item, index: state.items.length } }];
  },
};

const context = (): CommandContext => ({ correlationId: 'bulk-test', actor: { kind: 'system', name: 'command-handler-bulk-test' }, now: new Date() });

/** The PostgreSQL store, counting the reads and multi-stream appends asked of it. */
function countingStore(url: string): EventStore & { reads: StreamRead[]; bulkAppends: number } {
  const inner = createPostgresEventStore(url, { maxConnections: 4 });
  const reads: StreamRead[] = [];
  const counting = {
    reads,
    bulkAppends: 0,
    appendToStream: inner.appendToStream.bind(inner),
    appendToStreams(appends: readonly StreamAppend[]) {
      counting.bulkAppends++;
      return inner.appendToStreams(appends);
    },
    readStream: inner.readStream.bind(inner),
    readStreams(requests: readonly StreamRead[]) {
      reads.push(...requests);
      return inner.readStreams(requests);
    },
    readAll: inner.readAll.bind(inner),
    subscribeToAll: inner.subscribeToAll.bind(inner),
    headPosition: inner.headPosition.bind(inner),
    identity: inner.identity.bind(inner),
    close: inner.close.bind(inner),
  };
  return counting;
}

function value<T>(outcome: PromiseSettledResult<T> | undefined): T {
  if (outcome?.status !== 'fulfilled') throw new Error(`expected a result, got ${outcome?.status === 'rejected' ? String(outcome.reason) : 'nothing'}`);
  return outcome.value;
}

describe('command handler: bulk loads and commands (handleMany, loadMany)', function () {
  this.timeout(60_000);
  let url = '';
  let store: ReturnType<typeof countingStore>;
  let handler: CommandHandler;

  before(async () => {
    url = await migratedDatabaseUrl('command_handler_bulk');
  });
  beforeEach(() => {
    store = countingStore(url);
    handler = new CommandHandler(store, 10_000, () => 1);
  });
  afterEach(() => store.close());

  const items = async (stream: string) => (await store.readStream(stream)).map((e) => (e.data as { item: string }).item);

  it('decides each command on the state it was given and appends them all in one call, reading nothing', async () => {
    const existing = uniqueStream('list');
    await handler.handle(existing, listDecider, { type: 'Add', item: 'a' }, context());
    const [read] = await handler.loadMany([existing], listDecider);
    const fresh = [uniqueStream('list'), uniqueStream('list')];
    const readsBefore = store.reads.length;

    const outcomes = await handler.handleMany(
      listDecider,
      [
        { streamName: fresh[0]!, command: { type: 'Add', item: 'x' } },
        { streamName: existing, command: { type: 'Add', item: 'b' }, read },
        { streamName: fresh[1]!, command: { type: 'Add', item: 'y' } },
      ],
      context(),
    );
    expect(store.bulkAppends).to.equal(1);
    expect(store.reads.length).to.equal(readsBefore);
    const [x, b, y] = outcomes.map((o) => value(o)) as Array<HandleResult<ItemAdded, ListState>>;
    expect(x!.events).to.deep.equal([{ type: 'ItemAdded', data: { item: 'x', index: 0 } }]);
    expect(b!.state.items).to.deep.equal(['a', 'b']);
    expect(b!.nextExpectedRevision).to.equal(1);
    expect(y!.nextExpectedRevision).to.equal(0);
    expect(await items(existing)).to.deep.equal(['a', 'b']);
    expect(await items(fresh[1]!)).to.deep.equal(['y']);
  });

  it('gives a rejected command its own outcome, and appends nothing for a command that decides nothing', async () => {
    const full = uniqueStream('list');
    await handler.handle(full, listDecider, { type: 'Add', item: 'a' }, context());
    await handler.handle(full, listDecider, { type: 'Add', item: 'b' }, context());
    const [read] = await handler.loadMany([full], listDecider);
    const [kept, other] = [uniqueStream('list'), uniqueStream('list')];
    const outcomes = await handler.handleMany(
      listDecider,
      [
        { streamName: full, command: { type: 'Add', item: 'c' }, read },
        { streamName: kept, command: { type: 'Keep' } },
        { streamName: other, command: { type: 'Add', item: 'z' } },
      ],
      context(),
    );
    expect(outcomes[0]).to.include({ status: 'rejected' });
    expect((outcomes[0] as PromiseRejectedResult).reason).to.be.instanceOf(ConflictError);
    expect(value(outcomes[1])).to.deep.include({ events: [], position: START });
    expect(value(outcomes[2]).events).to.have.length(1);
    expect(await items(full)).to.deep.equal(['a', 'b']);
    expect(await store.readStream(kept)).to.deep.equal([]);
  });

  it('decides again, on what is stored, a stream that moved since it was read', async () => {
    const stream = uniqueStream('list');
    const [read] = await handler.loadMany([stream], listDecider);
    expect(read!.revision).to.equal('no_stream');
    // Another process appends in between.
    await store.appendToStream(stream, [{ ...newEvent('ItemAdded', { item: 'other', index: 0 }) }], 'no_stream');

    const [outcome] = await handler.handleMany(listDecider, [{ streamName: stream, command: { type: 'Add', item: 'mine' }, read: read! }], context());
    expect(value(outcome).events).to.deep.equal([{ type: 'ItemAdded', data: { item: 'mine', index: 1 } }]);
    expect(await items(stream)).to.deep.equal(['other', 'mine']);
  });

  it('takes one command per stream', async () => {
    const stream = uniqueStream('list');
    let error: unknown;
    try {
      await handler.handleMany(listDecider, [{ streamName: stream, command: { type: 'Add', item: 'a' } }, { streamName: stream, command: { type: 'Add', item: 'b' } }], context());
    } catch (e) {
      error = e;
    }
    expect(error).to.be.instanceOf(RangeError);
    expect(await store.readStream(stream)).to.deep.equal([]);
  });

  it('loadMany reads many streams in one read, a cached one from its cached revision on', async () => {
    const [cached, other, absent] = [uniqueStream('list'), uniqueStream('list'), uniqueStream('list')];
    await handler.handle(cached, listDecider, { type: 'Add', item: 'a' }, context()); // cached at revision 0
    await store.appendToStream(other, [newEvent('ItemAdded', { item: 'o', index: 0 })], 'no_stream');
    await store.appendToStream(cached, [newEvent('ItemAdded', { item: 'b', index: 1 })], 0);
    const readsBefore = store.reads.length;

    const states = await handler.loadMany([cached, other, absent], listDecider);
    expect(store.reads.slice(readsBefore)).to.deep.equal([
      { streamName: cached, fromRevision: 1 },
      { streamName: other, fromRevision: 0 },
      { streamName: absent, fromRevision: 0 },
    ]);
    expect(states).to.deep.equal([
      { state: { items: ['a', 'b'] }, revision: 1 },
      { state: { items: ['o'] }, revision: 0 },
      { state: { items: [] }, revision: 'no_stream' },
    ]);
  });
});
