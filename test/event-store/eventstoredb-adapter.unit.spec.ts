// The EventStoreDB adapter against a fake of the client's read and subscription interface (no
// server runs here): subscription batches, events that are not JSON, the store's identity. The
// fake's subscription is the client's own Subscription class (a Node Transform over a gRPC stream)
// fed by a stream of fake gRPC answers, so its buffering is the real one.
import { expect } from 'chai';
import { Readable } from 'node:stream';
import { randomUUID } from 'node:crypto';
import {
  StreamNotFoundError,
  WrongExpectedVersionError,
  type AllStreamResolvedEvent,
  type EventStoreDBClient,
  type SubscribeToAllOptions,
} from '@eventstore/db-client';
import { Subscription as ClientSubscription } from '@eventstore/db-client/dist/streams/utils/Subscription.js';
import { EventStoreDbEventStore, IDENTITY_STREAM, foreignReason } from '../../shared/event-store/eventstoredb-event-store.js';
import { START, type Position, type RecordedEvent, type Subscription } from '../../shared/event-store/event-store.js';
import { eventually, sleep } from './contract.js';

type ClientRecord = NonNullable<AllStreamResolvedEvent['event']>;

const metadata = { correlationId: 'c', causationId: null, actor: { kind: 'operator' }, occurredAt: '2025-01-01T00:00:00.000Z', schemaVersion: 1 };

/** The n-th event of the fake log: positions grow by 100 "bytes" an event, as EventStoreDB's do. */
function record(n: number, overrides: Partial<ClientRecord> = {}): ClientRecord {
  const position = BigInt(n) * 100n;
  return {
    streamId: `thing-${n}`,
    id: randomUUID(),
    revision: 0n,
    type: 'ThingHappened',
    data: { n },
    metadata,
    isJson: true,
    created: new Date(0),
    position: { commit: position, prepare: position },
    ...overrides,
  } as ClientRecord;
}

/** A fake gRPC read stream: hands out its answers as fast as it is read, then stays open (a live subscription). */
function grpcStream(records: readonly ClientRecord[]): Readable & { cancel(): void } {
  let next = 0;
  const stream = new Readable({
    objectMode: true,
    read() {
      if (next < records.length) {
        const event = records[next++]!;
        this.push({ hasEvent: () => true, getEvent: () => ({ event }) });
      }
    },
  }) as Readable & { cancel(): void };
  stream.cancel = () => stream.destroy();
  return stream;
}

class FakeClient {
  readonly subscribeCalls: Array<{ options: SubscribeToAllOptions | undefined; readableOptions: { highWaterMark?: number } | undefined }> = [];
  readonly streams = new Map<string, ClientRecord[]>();
  appends = 0;
  /** Runs before an append is stored: lets a test slip another writer in. */
  beforeAppend: (() => void) | null = null;

  constructor(readonly log: ClientRecord[] = []) {}

  subscribeToAll(options?: SubscribeToAllOptions, readableOptions?: { highWaterMark?: number }) {
    this.subscribeCalls.push({ options, readableOptions });
    const from = options?.fromPosition;
    const after = typeof from === 'object' ? from.commit : -1n;
    const records = this.log.filter((r) => r.position!.commit > after);
    // Exactly what the client's subscribeToAll builds around its gRPC stream.
    return new ClientSubscription(async () => grpcStream(records) as never, (e: unknown) => e as AllStreamResolvedEvent, readableOptions ?? {});
  }

  async *readAll(options: { fromPosition?: unknown; direction?: unknown; maxCount?: number }) {
    const backwards = String(options.direction).toLowerCase().includes('back');
    const ordered = backwards ? [...this.log].reverse() : this.log;
    let count = 0;
    for (const event of ordered) {
      if (count++ >= (options.maxCount ?? Infinity)) return;
      yield { event } as AllStreamResolvedEvent;
    }
  }

  async *readStream(name: string, options: { maxCount?: number } = {}) {
    const events = this.streams.get(name);
    if (!events) throw new StreamNotFoundError(undefined as never, name);
    for (const event of events.slice(0, options.maxCount ?? Infinity)) yield { event };
  }

  async appendToStream(name: string, event: { type: string; data: unknown }, options: { expectedRevision: unknown }) {
    this.appends++;
    this.beforeAppend?.();
    this.beforeAppend = null;
    if (this.streams.has(name)) {
      throw new WrongExpectedVersionError(undefined as never, { streamName: name, expected: options.expectedRevision, current: 0n } as never);
    }
    this.streams.set(name, [record(9999, { streamId: name, type: event.type, data: event.data as never })]);
    return { success: true, nextExpectedRevision: 0n };
  }

  async dispose() {}
}

interface Warning {
  readonly fields: Record<string, unknown>;
  readonly message: string;
}

function storeOver(client: FakeClient) {
  const warnings: Warning[] = [];
  const logger = { warn: (fields: Record<string, unknown>, message: string) => warnings.push({ fields, message }) };
  const store = new EventStoreDbEventStore(client as unknown as EventStoreDBClient, { logger: logger as never });
  return { store, warnings };
}

function collect(store: EventStoreDbEventStore, options: { after?: Position; batchSize?: number; handlerMs?: number } = {}) {
  const batches: RecordedEvent[][] = [];
  const errors: unknown[] = [];
  const subscription: Subscription = store.subscribeToAll({
    after: options.after ?? START,
    batchSize: options.batchSize,
    onEvents: async (events) => {
      batches.push([...events]);
      await sleep(options.handlerMs ?? 5); // a read-model transaction, a Kafka publish
    },
    onError: (error) => errors.push(error),
  });
  return { batches, errors, subscription, events: () => batches.flat() };
}

describe('EventStoreDB adapter (fake client)', function () {
  this.timeout(20_000);

  describe('subscription batches', () => {
    it('asks the client for a buffer of one batch and hands a catch-up over in batches of up to batchSize', async () => {
      const log = Array.from({ length: 2000 }, (_, i) => record(i + 1));
      const client = new FakeClient(log);
      const { store } = storeOver(client);
      const run = collect(store, { batchSize: 500 });
      try {
        await eventually(() => run.events().length === 2000, 15_000, 'every event of the catch-up');
        expect(client.subscribeCalls[0]!.readableOptions).to.deep.equal({ highWaterMark: 500 });
        const sizes = run.batches.map((b) => b.length);
        expect(Math.max(...sizes)).to.equal(500); // the client's default buffer made it 16 to 31
        expect(sizes.every((n) => n <= 500)).to.equal(true);
        expect(sizes.length, `batch sizes ${sizes.join(',')}`).to.be.at.most(6);
        expect(run.events().map((e) => e.data)).to.deep.equal(log.map((r) => r.data)); // each once, in order
        expect(run.errors).to.deep.equal([]);
      } finally {
        await run.subscription.stop();
        await store.close();
      }
    });

    it('keeps to the batch size the runner asks for (1000) and the default', async () => {
      const log = Array.from({ length: 2500 }, (_, i) => record(i + 1));
      for (const [batchSize, expected] of [
        [1000, 1000],
        [undefined, 500],
      ] as const) {
        const client = new FakeClient(log);
        const { store } = storeOver(client);
        const run = collect(store, { batchSize });
        try {
          await eventually(() => run.events().length === 2500, 15_000, 'every event');
          expect(client.subscribeCalls[0]!.readableOptions).to.deep.equal({ highWaterMark: expected });
          expect(Math.max(...run.batches.map((b) => b.length))).to.equal(expected);
        } finally {
          await run.subscription.stop();
          await store.close();
        }
      }
    });

    it('resumes after a checkpoint without repeating it', async () => {
      const log = Array.from({ length: 50 }, (_, i) => record(i + 1));
      const client = new FakeClient(log);
      const { store } = storeOver(client);
      const run = collect(store, { after: log[19]!.position!, batchSize: 10 });
      try {
        await eventually(() => run.events().length === 30, 5_000, 'the events after the checkpoint');
        expect(run.events().map((e) => e.data)).to.deep.equal(log.slice(20).map((r) => r.data));
        expect(client.subscribeCalls[0]!.options?.fromPosition).to.deep.equal(log[19]!.position);
      } finally {
        await run.subscription.stop();
        await store.close();
      }
    });
  });

  describe('an event that is not JSON (another writer)', () => {
    const foreignLog = () => [
      record(1),
      record(2, { isJson: false, data: new Uint8Array([0xde, 0xad, 0xbe, 0xef]) as never, streamId: 'legacy-1', type: 'Blob' }),
      record(3),
      record(4, { metadata: new Uint8Array([0x01, 0x02]) as never, streamId: 'legacy-2', type: 'Tagged' }),
      record(5),
    ];

    it('is passed over by the subscription, which goes on, and is logged once without its data', async () => {
      const log = foreignLog();
      const client = new FakeClient(log);
      const { store, warnings } = storeOver(client);
      const run = collect(store, { batchSize: 100 });
      try {
        await eventually(() => run.events().length === 3, 5_000, 'the JSON events');
        await sleep(50);
        expect(run.events().map((e) => e.data)).to.deep.equal([{ n: 1 }, { n: 3 }, { n: 5 }]);
        expect(run.errors).to.deep.equal([]);
        expect(client.subscribeCalls).to.have.length(1); // not ended and resubscribed
        expect(warnings.map((w) => w.fields)).to.deep.equal([
          { eventId: log[1]!.id, streamName: 'legacy-1', eventType: 'Blob', position: '200/200', reason: 'data is not JSON' },
          { eventId: log[3]!.id, streamName: 'legacy-2', eventType: 'Tagged', position: '400/400', reason: 'metadata is not JSON' },
        ]);
        expect(warnings[0]!.message).to.contain(log[1]!.id).and.contain('legacy-1');
        for (const w of warnings) expect(JSON.stringify(w)).to.not.match(/deadbeef|222,173|"data"/);
      } finally {
        await run.subscription.stop();
        await store.close();
      }
    });

    it('is passed over by readAll and headPosition too, and logged only once', async () => {
      const log = [...foreignLog(), record(6, { isJson: false, data: new Uint8Array([1]) as never })];
      const client = new FakeClient(log);
      const { store, warnings } = storeOver(client);
      try {
        expect((await store.readAll()).map((e) => e.data)).to.deep.equal([{ n: 1 }, { n: 3 }, { n: 5 }]);
        expect(await store.headPosition()).to.deep.equal(log[4]!.position); // not the foreign event after it
        await store.readAll();
        expect(warnings.map((w) => w.fields.eventId)).to.deep.equal([log[1]!.id, log[3]!.id, log[5]!.id]);
      } finally {
        await store.close();
      }
    });

    it('is told apart by what the client hands over: data as bytes, or metadata as bytes', () => {
      expect(foreignReason({ isJson: true, metadata })).to.equal(null);
      expect(foreignReason({ isJson: true, metadata: undefined })).to.equal(null);
      expect(foreignReason({ isJson: false, metadata })).to.equal('data is not JSON');
      expect(foreignReason({ isJson: true, metadata: new Uint8Array([1]) })).to.equal('metadata is not JSON');
    });
  });

  describe('identity', () => {
    it('is written once to a stream of its own, read back by every later store, and hidden from readers', async () => {
      const client = new FakeClient([record(1)]);
      const one = storeOver(client).store;
      const identity = await one.identity();
      expect(identity).to.match(/^eventstoredb:[0-9a-f-]{36}$/);
      expect(await one.identity()).to.equal(identity);
      const two = storeOver(client).store;
      expect(await two.identity()).to.equal(identity);
      expect(client.appends).to.equal(1);

      // In the log it is passed over like EventStoreDB's own records.
      client.log.push(client.streams.get(IDENTITY_STREAM)![0]!);
      expect((await two.readAll()).map((e) => e.streamName)).to.deep.equal(['thing-1']);
      expect(await two.headPosition()).to.deep.equal(client.log[0]!.position);
    });

    it('is the first writer’s when two stores create it at once', async () => {
      const client = new FakeClient();
      const { store } = storeOver(client);
      const theirs = randomUUID();
      client.beforeAppend = () => client.streams.set(IDENTITY_STREAM, [record(1, { streamId: IDENTITY_STREAM, data: { id: theirs } })]);
      expect(await store.identity()).to.equal(`eventstoredb:${theirs}`);
    });

    it('differs for a wiped database: a new one is written', async () => {
      const before = await storeOver(new FakeClient()).store.identity();
      const after = await storeOver(new FakeClient()).store.identity();
      expect(after).to.not.equal(before);
    });
  });
});
