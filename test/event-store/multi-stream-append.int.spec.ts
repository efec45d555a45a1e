import { expect } from 'chai';
import { comparePositions, WrongExpectedVersion, type AppendResult, type EventStore, type StreamAppend } from '../../shared/event-store/event-store.js';
import { createPostgresEventStore } from '../../shared/event-store/postgres-event-store.js';
import { appendToStreams } from '../../shared/event-store/multi-stream-append.js';
import { InvalidEventError, ValidatingEventStore, type EventSchemas } from '../../shared/event-store/validating-event-store.js';
import { databaseKind, migratedDatabaseUrl } from '../support/database.js';
import { newEvent, uniqueStream } from './contract.js';

/** Every type valid except 'Invalid'; nothing to upcast. */
const schemas: EventSchemas = {
  validate(type) {
    if (type === 'Invalid') throw new Error('not valid');
  },
  upcast: (_type, schemaVersion, data) => ({ schemaVersion, data }),
};

const fulfilled = (outcome: PromiseSettledResult<AppendResult> | undefined): AppendResult => {
  if (outcome?.status !== 'fulfilled') throw new Error(`expected an append, got ${String(outcome?.status === 'rejected' ? outcome.reason : outcome)}`);
  return outcome.value;
};
const rejected = (outcome: PromiseSettledResult<AppendResult> | undefined): unknown => {
  if (outcome?.status !== 'rejected') throw new Error('expected a refused append');
  return outcome.reason;
};

/** The appends of one call: each outcome is the one appendToStream would give, whatever the others do. */
function multiStreamAppendContract(name: string, open: () => EventStore, append: (store: EventStore, appends: StreamAppend[]) => ReturnType<typeof appendToStreams>) {
  describe(`appending to many streams at once: ${name}`, () => {
    let store: EventStore;
    beforeEach(() => (store = open()));
    afterEach(() => store.close());

    it('appends to every stream with its own revision and position, in order', async () => {
      const streams = Array.from({ length: 5 }, () => uniqueStream('bulk'));
      const events = streams.map((_, i) => Array.from({ length: i + 1 }, () => newEvent('Bulk', { i })));
      const outcomes = await append(store, streams.map((streamName, i) => ({ streamName, events: events[i]!, expected: 'no_stream' })));
      for (const [i, streamName] of streams.entries()) {
        const result = fulfilled(outcomes[i]);
        expect(result.nextExpectedRevision).to.equal(i);
        const stored = await store.readStream(streamName);
        expect(stored.map((e) => e.id)).to.deep.equal(events[i]!.map((e) => e.id));
        expect(comparePositions(stored.at(-1)!.position, result.position)).to.equal(0);
      }
    });

    it('checks each expected revision on its own: a conflict fails only its append', async () => {
      const existing = uniqueStream('bulk');
      await store.appendToStream(existing, [newEvent(), newEvent()], 'no_stream');
      const [fresh, matching, stale, taken] = [uniqueStream('bulk'), existing, uniqueStream('bulk'), uniqueStream('bulk')];
      await store.appendToStream(taken, [newEvent()], 'no_stream');
      await store.appendToStream(stale, [newEvent(), newEvent(), newEvent()], 'no_stream');
      const outcomes = await append(store, [
        { streamName: fresh, events: [newEvent()], expected: 'no_stream' },
        { streamName: matching, events: [newEvent()], expected: 1 },
        { streamName: stale, events: [newEvent()], expected: 0 },
        { streamName: taken, events: [newEvent()], expected: 'no_stream' },
      ]);
      expect(fulfilled(outcomes[0]).nextExpectedRevision).to.equal(0);
      expect(fulfilled(outcomes[1]).nextExpectedRevision).to.equal(2);
      expect(rejected(outcomes[2])).to.be.instanceOf(WrongExpectedVersion).and.include({ actual: 2 });
      expect(rejected(outcomes[3])).to.be.instanceOf(WrongExpectedVersion).and.include({ actual: 0 });
      expect(await store.readStream(stale)).to.have.length(3);
      expect(await store.readStream(taken)).to.have.length(1);
    });

    it('appends to a stream named twice in the order given', async () => {
      const stream = uniqueStream('bulk');
      const [first, second] = [newEvent('First'), newEvent('Second')];
      const outcomes = await append(store, [
        { streamName: stream, events: [first], expected: 'no_stream' },
        { streamName: stream, events: [second], expected: 0 },
      ]);
      expect(outcomes.map((o) => fulfilled(o).nextExpectedRevision)).to.deep.equal([0, 1]);
      expect((await store.readStream(stream)).map((e) => e.id)).to.deep.equal([first.id, second.id]);
    });

    it('refuses an append with nothing to append on its own', async () => {
      const [empty, full] = [uniqueStream('bulk'), uniqueStream('bulk')];
      const outcomes = await append(store, [
        { streamName: empty, events: [], expected: 'no_stream' },
        { streamName: full, events: [newEvent()], expected: 'no_stream' },
      ]);
      expect(rejected(outcomes[0])).to.be.instanceOf(RangeError);
      expect(fulfilled(outcomes[1]).nextExpectedRevision).to.equal(0);
    });
  });
}

describe(`multi-stream appends (${databaseKind()} PostgreSQL)`, function () {
  this.timeout(60_000);
  let url = '';
  before(async () => {
    url = await migratedDatabaseUrl('multi_stream_append');
  });

  multiStreamAppendContract('PostgreSQL, in one statement', () => createPostgresEventStore(url), appendToStreams);
  multiStreamAppendContract(
    'a store without appendToStreams, one append at a time',
    () => createPostgresEventStore(url),
    (store, appends) => {
      // Only the port's required methods: the fallback loop of multi-stream-append.ts.
      const { appendToStream, readStream, readStreams, readAll, subscribeToAll, headPosition, identity, close } = store;
      const plain: EventStore = {
        appendToStream: appendToStream.bind(store),
        readStream: readStream.bind(store),
        readStreams: readStreams.bind(store),
        readAll: readAll.bind(store),
        subscribeToAll: subscribeToAll.bind(store),
        headPosition: headPosition.bind(store),
        identity: identity.bind(store),
        close: close.bind(store),
      };
      return appendToStreams(plain, appends);
    },
  );

  it('writes more appends than one statement takes, and wakes a subscription once they commit', async () => {
    const store = createPostgresEventStore(url, { pollIntervalMs: 60_000 });
    try {
      const head = await store.headPosition();
      const prefix = uniqueStream('many');
      const seen: string[] = [];
      const subscription = store.subscribeToAll({ after: head, onEvents: async (events) => void seen.push(...events.filter((e) => e.streamName.startsWith(prefix)).map((e) => e.id)) });
      const appends = Array.from({ length: 1500 }, (_, i) => ({ streamName: `${prefix}-${i}`, events: [newEvent('Many', { i })], expected: 'no_stream' as const }));
      const outcomes = await appendToStreams(store, appends);
      expect(outcomes.filter((o) => o.status === 'fulfilled')).to.have.length(1500);
      const deadline = Date.now() + 10_000;
      while (seen.length < 1500 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      await subscription.stop();
      expect(new Set(seen)).to.deep.equal(new Set(appends.map((a) => a.events[0]!.id)));
    } finally {
      await store.close();
    }
  });

  it('through schema validation: an invalid event refuses its own append, the others are written', async () => {
    const store = new ValidatingEventStore(createPostgresEventStore(url), schemas);
    try {
      const [bad, good] = [uniqueStream('checked'), uniqueStream('checked')];
      const outcomes = await store.appendToStreams([
        { streamName: bad, events: [newEvent('Invalid')], expected: 'no_stream' },
        { streamName: good, events: [newEvent('Valid')], expected: 'no_stream' },
      ]);
      expect(rejected(outcomes[0])).to.be.instanceOf(InvalidEventError);
      expect(fulfilled(outcomes[1]).nextExpectedRevision).to.equal(0);
      expect(await store.readStream(bad)).to.deep.equal([]);
    } finally {
      await store.close();
    }
  });
});
