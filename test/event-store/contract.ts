// The event store contract: every adapter runs this suite against a real server.
// The store may be shared with other tests (EventStoreDB is), so every test uses its own stream
// names and reads $all only after the head it saw when it started.
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import {
  START,
  WrongExpectedVersion,
  comparePositions,
  type AppendResult,
  type EventStore,
  type NewEvent,
  type Position,
  type RecordedEvent,
  type Subscription,
} from '../../shared/event-store/event-store.js';

/** Opens a new store (own connections) over the same storage each call; the suite closes it. */
export type EventStoreFactory = () => Promise<EventStore>;

export function newEvent(type = 'ThingHappened', data: unknown = { n: 1 }): NewEvent {
  return {
    id: randomUUID(),
    type,
    data,
    metadata: {
      correlationId: randomUUID(),
      causationId: null,
      actor: { kind: 'system', name: 'contract-test' },
      occurredAt: new Date().toISOString(),
      schemaVersion: 1,
    },
  };
}

export function uniqueStream(prefix = 'contract'): string {
  return `${prefix}-${randomUUID()}`;
}

export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(20);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export async function expectWrongExpectedVersion(
  append: Promise<unknown>,
  actual: number | 'no_stream',
): Promise<WrongExpectedVersion> {
  try {
    await append;
  } catch (error) {
    expect(error).to.be.instanceOf(WrongExpectedVersion);
    expect((error as WrongExpectedVersion).actual).to.equal(actual);
    return error as WrongExpectedVersion;
  }
  expect.fail('append should have failed with WrongExpectedVersion');
}

export function expectStrictlyIncreasing(positions: readonly Position[]): void {
  for (let i = 1; i < positions.length; i++) {
    expect(comparePositions(positions[i - 1]!, positions[i]!), `position ${i} after position ${i - 1}`).to.equal(-1);
  }
}

/** Collects what a subscription delivers, keeping only the streams a test owns. */
export class Collector {
  readonly events: RecordedEvent[] = [];
  readonly batches: number[] = [];
  calls = 0;
  constructor(private readonly owns: (streamName: string) => boolean) {}
  readonly onEvents = async (events: readonly RecordedEvent[]): Promise<void> => {
    this.calls++;
    this.batches.push(events.length);
    for (const e of events) if (this.owns(e.streamName)) this.events.push(e);
  };
  ids(): string[] {
    return this.events.map((e) => e.id);
  }
}

export function runEventStoreContract(name: string, factory: EventStoreFactory): void {
  describe(`event store contract: ${name}`, function () {
    this.timeout(30_000);
    const opened: EventStore[] = [];
    const subscriptions: Subscription[] = [];
    let store: EventStore;

    async function open(): Promise<EventStore> {
      const s = await factory();
      opened.push(s);
      return s;
    }

    function subscribe(s: EventStore, options: Parameters<EventStore['subscribeToAll']>[0]): Subscription {
      const sub = s.subscribeToAll(options);
      subscriptions.push(sub);
      return sub;
    }

    beforeEach(async () => {
      store = await open();
    });

    afterEach(async () => {
      await Promise.all(subscriptions.splice(0).map((s) => s.stop()));
      await Promise.all(opened.splice(0).map((s) => s.close()));
    });

    describe('appending and reading a stream', () => {
      it('reads back what was appended, with revisions, positions and metadata', async () => {
        const stream = uniqueStream();
        const events = [newEvent('A', { n: 1, nested: { list: [1, 'two', null] } }), newEvent('B', 'text'), newEvent('C', [1, 2])];
        const result = await store.appendToStream(stream, events, 'no_stream');
        expect(result.nextExpectedRevision).to.equal(2);

        const read = await store.readStream(stream);
        expect(read.map((e) => e.id)).to.deep.equal(events.map((e) => e.id));
        expect(read.map((e) => e.revision)).to.deep.equal([0, 1, 2]);
        read.forEach((e, i) => {
          expect(e.streamName).to.equal(stream);
          expect(e.type).to.equal(events[i]!.type);
          expect(e.data).to.deep.equal(events[i]!.data);
          expect(e.metadata).to.deep.equal(events[i]!.metadata);
          expect(e.recordedAt).to.be.instanceOf(Date);
          expect(Math.abs(e.recordedAt.getTime() - Date.now())).to.be.below(60_000);
          expect(typeof e.position.commit).to.equal('bigint');
          expect(typeof e.position.prepare).to.equal('bigint');
        });
        expectStrictlyIncreasing(read.map((e) => e.position));
        expect(read[2]!.position).to.deep.equal(result.position);
      });

      it('reads an unknown stream as empty', async () => {
        expect(await store.readStream(uniqueStream())).to.deep.equal([]);
      });

      it('reads from a revision, backwards and with a maximum count', async () => {
        const stream = uniqueStream();
        const events = Array.from({ length: 5 }, (_, n) => newEvent('Counted', { n }));
        await store.appendToStream(stream, events, 'no_stream');
        const revisions = (read: RecordedEvent[]) => read.map((e) => e.revision);
        expect(revisions(await store.readStream(stream, { fromRevision: 2 }))).to.deep.equal([2, 3, 4]);
        expect(revisions(await store.readStream(stream, { fromRevision: 1, maxCount: 2 }))).to.deep.equal([1, 2]);
        expect(revisions(await store.readStream(stream, { direction: 'backwards' }))).to.deep.equal([4, 3, 2, 1, 0]);
        expect(revisions(await store.readStream(stream, { direction: 'backwards', fromRevision: 3, maxCount: 2 }))).to.deep.equal([3, 2]);
        expect(revisions(await store.readStream(stream, { fromRevision: 5 }))).to.deep.equal([]);
      });

      it('reads several streams at once, each from its own revision, as separate reads would', async () => {
        const [a, b, empty] = [uniqueStream(), uniqueStream(), uniqueStream()];
        await store.appendToStream(a, Array.from({ length: 4 }, (_, n) => newEvent('A', { n })), 'no_stream');
        await store.appendToStream(b, [newEvent('B', { n: 0 })], 'no_stream');
        await store.appendToStream(a, [newEvent('A', { n: 4 })], 3);
        const requests = [{ streamName: b }, { streamName: a, fromRevision: 2 }, { streamName: empty }, { streamName: a, fromRevision: 9 }];
        const together = await store.readStreams(requests);
        const separately = await Promise.all(requests.map((r) => store.readStream(r.streamName, { fromRevision: r.fromRevision ?? 0 })));
        expect(together).to.deep.equal(separately);
        expect(together.map((events) => events.map((e) => e.revision))).to.deep.equal([[0], [2, 3, 4], [], []]);
        expect(await store.readStreams([])).to.deep.equal([]);
      });

      it('rejects an empty append', async () => {
        let failed = false;
        await store.appendToStream(uniqueStream(), [], 'any').catch(() => (failed = true));
        expect(failed).to.equal(true);
      });
    });

    describe('expected revision', () => {
      it("'no_stream' creates a stream and fails once it exists, reporting its revision", async () => {
        const stream = uniqueStream();
        await store.appendToStream(stream, [newEvent(), newEvent()], 'no_stream');
        const error = await expectWrongExpectedVersion(store.appendToStream(stream, [newEvent()], 'no_stream'), 1);
        expect(error.streamName).to.equal(stream);
        expect(error.expected).to.equal('no_stream');
        expect(await store.readStream(stream)).to.have.length(2);
      });

      it('an exact revision succeeds only when it is the last revision', async () => {
        const stream = uniqueStream();
        await store.appendToStream(stream, [newEvent()], 'no_stream');
        const second = await store.appendToStream(stream, [newEvent(), newEvent()], 0);
        expect(second.nextExpectedRevision).to.equal(2);
        await expectWrongExpectedVersion(store.appendToStream(stream, [newEvent()], 1), 2); // behind
        await expectWrongExpectedVersion(store.appendToStream(stream, [newEvent()], 5), 2); // ahead
        const third = await store.appendToStream(stream, [newEvent()], 2);
        expect(third.nextExpectedRevision).to.equal(3);
        expect((await store.readStream(stream)).map((e) => e.revision)).to.deep.equal([0, 1, 2, 3]);
      });

      it('gives each of many appends started together its own outcome, as if each were alone', async () => {
        const streams = Array.from({ length: 6 }, () => uniqueStream());
        await store.appendToStream(streams[0]!, [newEvent()], 'no_stream');
        const [conflict, ...rest] = await Promise.allSettled([
          store.appendToStream(streams[0]!, [newEvent()], 'no_stream'),
          ...streams.slice(1).map((s, i) => store.appendToStream(s, Array.from({ length: i + 1 }, () => newEvent()), 'no_stream')),
          store.appendToStream(uniqueStream(), [newEvent()], 3), // expects a stream that does not exist
        ]);
        expect(conflict.status).to.equal('rejected');
        await expectWrongExpectedVersion(Promise.reject((conflict as PromiseRejectedResult).reason), 0);
        const missing = rest.pop()!;
        expect(missing.status).to.equal('rejected');
        await expectWrongExpectedVersion(Promise.reject((missing as PromiseRejectedResult).reason), 'no_stream');
        const committed = rest.map((r) => (r as PromiseFulfilledResult<AppendResult>).value);
        expect(committed.map((r) => r.nextExpectedRevision)).to.deep.equal([0, 1, 2, 3, 4]);
        for (const [i, s] of streams.slice(1).entries()) {
          const events = await store.readStream(s);
          expect(events.map((e) => e.revision)).to.deep.equal(Array.from({ length: i + 1 }, (_, n) => n));
          expect(comparePositions(events.at(-1)!.position, committed[i]!.position)).to.equal(0);
        }
        expect(await store.readStream(streams[0]!)).to.have.length(1);
      });

      it('an exact revision on a stream that does not exist fails with no_stream', async () => {
        const stream = uniqueStream();
        await expectWrongExpectedVersion(store.appendToStream(stream, [newEvent()], 0), 'no_stream');
        expect(await store.readStream(stream)).to.deep.equal([]);
      });

      it("'any' appends to a new and to an existing stream", async () => {
        const stream = uniqueStream();
        expect((await store.appendToStream(stream, [newEvent()], 'any')).nextExpectedRevision).to.equal(0);
        expect((await store.appendToStream(stream, [newEvent(), newEvent()], 'any')).nextExpectedRevision).to.equal(2);
      });

      it('a rejected append writes none of its events', async () => {
        const stream = uniqueStream();
        await store.appendToStream(stream, [newEvent()], 'no_stream');
        const rejected = [newEvent(), newEvent()];
        await expectWrongExpectedVersion(store.appendToStream(stream, rejected, 'no_stream'), 0);
        const ids = (await store.readStream(stream)).map((e) => e.id);
        expect(ids).to.have.length(1);
        expect(ids).to.not.include.members(rejected.map((e) => e.id));
      });

      it('repeating an append that succeeded (same event ids and revision) is answered as the first time', async () => {
        const stream = uniqueStream();
        await store.appendToStream(stream, [newEvent()], 'no_stream');
        const events = [newEvent(), newEvent()];
        const first = await store.appendToStream(stream, events, 0);
        const again = await store.appendToStream(stream, events, 0);
        expect(again.nextExpectedRevision).to.equal(first.nextExpectedRevision);
        expect(comparePositions(again.position, first.position)).to.equal(0);
        expect(await store.readStream(stream)).to.have.length(3);
      });
    });

    describe('concurrency', () => {
      it('of concurrent appends with the same expected revision exactly one wins, from two processes', async () => {
        const other = await open();
        const stream = uniqueStream();
        await store.appendToStream(stream, [newEvent()], 'no_stream');
        const attempts = Array.from({ length: 10 }, (_, i) => {
          const events = [newEvent('Raced', { i }), newEvent('Raced', { i })];
          return { events, result: (i % 2 ? other : store).appendToStream(stream, events, 0) };
        });
        const settled = await Promise.allSettled(attempts.map((a) => a.result));
        const winners = settled.flatMap((s, i) => (s.status === 'fulfilled' ? [i] : []));
        expect(winners).to.have.length(1);
        for (const s of settled) {
          if (s.status === 'rejected') {
            expect(s.reason).to.be.instanceOf(WrongExpectedVersion);
            expect((s.reason as WrongExpectedVersion).actual).to.equal(2);
          }
        }
        const stored = await store.readStream(stream);
        expect(stored.slice(1).map((e) => e.id)).to.deep.equal(attempts[winners[0]!]!.events.map((e) => e.id));
      });

      it("concurrent 'any' appends all succeed, in one gapless sequence of revisions", async () => {
        const other = await open();
        const stream = uniqueStream();
        const results = await Promise.all(
          Array.from({ length: 12 }, (_, i) => (i % 2 ? other : store).appendToStream(stream, [newEvent('Any', { i })], 'any')),
        );
        expect(results.map((r) => r.nextExpectedRevision).sort((a, b) => a - b)).to.deep.equal([...Array(12).keys()]);
        expect((await store.readStream(stream)).map((e) => e.revision)).to.deep.equal([...Array(12).keys()]);
      });
    });

    describe('reading all streams', () => {
      it('returns events of every stream in the order they were appended, each after the previous', async () => {
        const head = await store.headPosition();
        const prefix = uniqueStream('all');
        const streams = [`${prefix}-a`, `${prefix}-b`, `${prefix}-c`];
        const appended: string[] = [];
        for (let i = 0; i < 9; i++) {
          const events = [newEvent('Ordered', { i })];
          await store.appendToStream(streams[i % 3]!, events, 'any');
          appended.push(events[0]!.id);
        }
        const all = (await store.readAll({ after: head })).filter((e) => e.streamName.startsWith(prefix));
        expect(all.map((e) => e.id)).to.deep.equal(appended);
        expectStrictlyIncreasing(all.map((e) => e.position));
        expect(all.every((e) => comparePositions(e.position, head) > 0)).to.equal(true);
      });

      it('reads strictly after a position, and at most maxCount events', async () => {
        const head = await store.headPosition();
        const stream = uniqueStream();
        const events = Array.from({ length: 6 }, (_, n) => newEvent('Paged', { n }));
        for (const e of events) await store.appendToStream(stream, [e], 'any');
        const mine = (list: RecordedEvent[]) => list.filter((e) => e.streamName === stream).map((e) => e.id);

        const all = (await store.readAll({ after: head })).filter((e) => e.streamName === stream);
        expect(all.map((e) => e.id)).to.deep.equal(events.map((e) => e.id));
        expect(mine(await store.readAll({ after: all[2]!.position }))).to.deep.equal(events.slice(3).map((e) => e.id));
        expect(mine(await store.readAll({ after: all[5]!.position }))).to.deep.equal([]);

        // Paging by maxCount from a checkpoint visits every event once.
        const paged: string[] = [];
        let checkpoint = head;
        for (;;) {
          const page = await store.readAll({ after: checkpoint, maxCount: 4 });
          expect(page.length).to.be.at.most(4);
          if (page.length === 0) break;
          paged.push(...mine(page));
          checkpoint = page.at(-1)!.position;
        }
        expect(paged).to.deep.equal(events.map((e) => e.id));
      });

      it('reads from START, the beginning of the log', async () => {
        await store.appendToStream(uniqueStream(), [newEvent(), newEvent()], 'no_stream');
        const first = await store.readAll({ after: START, maxCount: 5 });
        expect(first.length).to.be.within(2, 5);
        expect(comparePositions(first[0]!.position, START)).to.equal(1);
        expectStrictlyIncreasing(first.map((e) => e.position));
        expect((await store.readAll({ maxCount: 1 })).map((e) => e.id)).to.deep.equal([first[0]!.id]);
        // Reading on from the first event continues with the second.
        const second = await store.readAll({ after: first[0]!.position, maxCount: 1 });
        expect(second.map((e) => e.id)).to.deep.equal([first[1]!.id]);
      });

      it('headPosition is the newest event readAll can see', async () => {
        const stream = uniqueStream();
        const result = await store.appendToStream(stream, [newEvent(), newEvent()], 'no_stream');
        const head = await store.headPosition();
        expect(comparePositions(head, result.position)).to.be.at.least(0);
        const after = await store.readAll({ after: head });
        expect(after.some((e) => e.streamName === stream)).to.equal(false);
      });
    });

    describe('identity', () => {
      it('names the store, the same for every process over the same storage, and is no event a reader sees', async () => {
        const head = await store.headPosition();
        const identity = await store.identity(); // written now if this storage had none
        expect(identity).to.match(/^(postgresql|eventstoredb):[0-9a-f-]{36}$/);
        expect(await store.identity()).to.equal(identity);
        expect(await (await open()).identity()).to.equal(identity);
        const marker = uniqueStream();
        await store.appendToStream(marker, [newEvent()], 'no_stream');
        const after = await store.readAll({ after: head });
        expect(after.some((e) => e.streamName === marker)).to.equal(true);
        const id = identity.slice(identity.indexOf(':') + 1);
        expect(after.filter((e) => JSON.stringify(e.data ?? null).includes(id)).map((e) => e.streamName)).to.deep.equal([]);
      });
    });

    describe('subscription to all', () => {
      it('delivers every event exactly once, in order, including those appended while it runs', async () => {
        const head = await store.headPosition();
        const prefix = uniqueStream('sub');
        const expected: string[] = [];
        const append = async (s: EventStore, stream: string, count: number) => {
          const events = Array.from({ length: count }, (_, n) => newEvent('Seen', { n }));
          await s.appendToStream(stream, events, 'any');
          expected.push(...events.map((e) => e.id));
        };
        await append(store, `${prefix}-1`, 3); // before the subscription starts
        const collector = new Collector((s) => s.startsWith(prefix));
        subscribe(store, { after: head, onEvents: collector.onEvents, batchSize: 4 });
        const writer = await open(); // another process appending
        for (let i = 0; i < 10; i++) await append(i % 2 ? writer : store, `${prefix}-${i % 3}`, 1 + (i % 3));
        await eventually(() => collector.events.length >= expected.length, 10_000, 'all events');
        await sleep(300);
        expect(collector.ids()).to.deep.equal(expected);
        expectStrictlyIncreasing(collector.events.map((e) => e.position));
        expect(Math.max(...collector.batches)).to.be.at.most(4);
      });

      it('resumes from a checkpoint without skipping or repeating', async () => {
        const head = await store.headPosition();
        const stream = uniqueStream();
        const events = Array.from({ length: 10 }, (_, n) => newEvent('Resumed', { n }));
        for (const e of events.slice(0, 6)) await store.appendToStream(stream, [e], 'any');

        const first = new Collector((s) => s === stream);
        const sub1 = subscribe(store, { after: head, onEvents: first.onEvents, batchSize: 2 });
        await eventually(() => first.events.length >= 4, 10_000, 'first four');
        await sub1.stop();
        const checkpoint = first.events.at(-1)!.position;
        const handledBefore = first.events.length;

        for (const e of events.slice(6)) await store.appendToStream(stream, [e], 'any');
        const second = new Collector((s) => s === stream);
        subscribe(store, { after: checkpoint, onEvents: second.onEvents });
        await eventually(() => handledBefore + second.events.length >= events.length, 10_000, 'the rest');
        await sleep(300);
        expect([...first.ids(), ...second.ids()]).to.deep.equal(events.map((e) => e.id));
      });

      it('stop() waits for a running handler, and afterwards the handler is never called', async () => {
        const head = await store.headPosition();
        const stream = uniqueStream();
        let inHandler = false;
        let finished = 0;
        let callsAfterStop = 0;
        let stopped = false;
        const sub = subscribe(store, {
          after: head,
          onEvents: async (events) => {
            if (!events.some((e) => e.streamName === stream)) return;
            if (stopped) callsAfterStop++;
            inHandler = true;
            await sleep(300);
            inHandler = false;
            finished++;
          },
        });
        await store.appendToStream(stream, [newEvent()], 'no_stream');
        await eventually(() => inHandler, 10_000, 'the handler to start');
        await sub.stop();
        stopped = true;
        expect(inHandler).to.equal(false);
        expect(finished).to.equal(1);
        await store.appendToStream(stream, [newEvent()], 0);
        await sleep(800);
        expect(callsAfterStop).to.equal(0);
        await sub.stop(); // stopping twice is harmless
      });

      it('stop() called inside the handler returns, and no further batch is delivered', async () => {
        const head = await store.headPosition();
        const stream = uniqueStream();
        const collector = new Collector((s) => s === stream);
        let stopReturned = false;
        const sub = subscribe(store, {
          after: head,
          batchSize: 1,
          onEvents: async (events) => {
            await collector.onEvents(events);
            if (collector.events.length === 1) {
              await sub.stop();
              stopReturned = true;
            }
          },
        });
        await store.appendToStream(stream, [newEvent(), newEvent(), newEvent()], 'no_stream');
        await eventually(() => stopReturned, 10_000, 'stop() inside the handler');
        await sleep(500);
        expect(collector.events).to.have.length(1);
      });

      it('a failing handler is reported and ends the subscription', async () => {
        const head = await store.headPosition();
        const stream = uniqueStream();
        const errors: unknown[] = [];
        let calls = 0;
        const sub = subscribe(store, {
          after: head,
          onEvents: async (events) => {
            if (!events.some((e) => e.streamName === stream)) return;
            calls++;
            throw new Error('projection failed');
          },
          onError: (error) => errors.push(error),
        });
        await store.appendToStream(stream, [newEvent()], 'no_stream');
        await eventually(() => errors.length > 0, 10_000, 'the error report');
        await store.appendToStream(stream, [newEvent()], 0);
        await sleep(600);
        expect(calls).to.equal(1);
        expect((errors[0] as Error).message).to.equal('projection failed');
        await sub.stop(); // resolves although the subscription already ended
      });
    });
  });
}
