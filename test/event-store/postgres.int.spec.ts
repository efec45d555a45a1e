import { expect } from 'chai';
import pg from 'pg';
import { comparePositions, type Position, type RecordedEvent } from '../../shared/event-store/event-store.js';
import { createPostgresEventStore, PostgresEventStore } from '../../shared/event-store/postgres-event-store.js';
import { databaseKind, migratedDatabaseUrl } from '../support/database.js';
import {
  Collector,
  eventually,
  expectStrictlyIncreasing,
  newEvent,
  runEventStoreContract,
  sleep,
  uniqueStream,
} from './contract.js';

describe(`PostgreSQL event store (${databaseKind()} server)`, function () {
  this.timeout(60_000);
  let url = '';

  before(async () => {
    url = await migratedDatabaseUrl('event_store');
  });

  runEventStoreContract('PostgreSQL', async () => createPostgresEventStore(url));

  // A transaction that is slow to commit (lock wait, fsync stall, a long explicit transaction)
  // holds events with a lower position than events already committed. A reader that moved past
  // them would never see them: these tests hold such a transaction open on purpose.
  describe('a slow transaction', () => {
    let store: PostgresEventStore;
    let slow: pg.Client;

    beforeEach(async () => {
      store = createPostgresEventStore(url, { pollIntervalMs: 100 });
      slow = new pg.Client({ connectionString: url });
      await slow.connect();
    });

    afterEach(async () => {
      await slow.query('ROLLBACK').catch(() => undefined);
      await slow.end();
      await store.close();
    });

    /** Inserts one event inside the open transaction of `slow`, the way any writer of the table would. */
    async function insertInSlowTransaction(streamName: string): Promise<{ id: string; xid: bigint }> {
      const event = newEvent('Slow');
      const { rows } = await slow.query<{ xid: string }>(
        `INSERT INTO events (stream_name, stream_position, event_id, type, data, metadata)
         VALUES ($1, 0, $2, $3, $4, $5) RETURNING transaction_id::text AS xid`,
        [streamName, event.id, event.type, JSON.stringify(event.data), JSON.stringify(event.metadata)],
      );
      return { id: event.id, xid: BigInt(rows[0]!.xid) };
    }

    async function mine(after: Position, prefix: string): Promise<RecordedEvent[]> {
      return (await store.readAll({ after })).filter((e) => e.streamName.startsWith(prefix));
    }

    it('is not read past: a later commit stays invisible until it commits, then both are read, its event first', async () => {
      const prefix = uniqueStream('slow');
      const head = await store.headPosition();
      const collector = new Collector((s) => s.startsWith(prefix));
      store.subscribeToAll({ after: head, onEvents: collector.onEvents });

      await slow.query('BEGIN');
      const a = await insertInSlowTransaction(`${prefix}-a`);
      const b = newEvent('Fast');
      const appended = await store.appendToStream(`${prefix}-b`, [b], 'no_stream'); // commits
      expect(appended.position.commit > a.xid).to.equal(true);

      await sleep(400); // several poll intervals, and B's NOTIFY has arrived
      expect(await mine(head, prefix)).to.deep.equal([]);
      expect(collector.events).to.deep.equal([]);
      expect(comparePositions(await store.headPosition(), appended.position)).to.equal(-1);

      await slow.query('COMMIT');
      const read = await mine(head, prefix);
      expect(read.map((e) => e.id)).to.deep.equal([a.id, b.id]);
      expectStrictlyIncreasing(read.map((e) => e.position));
      await eventually(() => collector.events.length === 2, 10_000, 'both events');
      expect(collector.ids()).to.deep.equal([a.id, b.id]);
      expect(comparePositions(await store.headPosition(), appended.position)).to.equal(0);
    });

    it('orders by transaction before sequence: an older transaction inserting last is still read first', async () => {
      const prefix = uniqueStream('slow');
      const head = await store.headPosition();
      const collector = new Collector((s) => s.startsWith(prefix));
      store.subscribeToAll({ after: head, onEvents: collector.onEvents });

      await slow.query('BEGIN');
      await slow.query('SELECT pg_current_xact_id()'); // takes its transaction id now
      const b = newEvent('Fast');
      const appended = await store.appendToStream(`${prefix}-b`, [b], 'no_stream');
      const a = await insertInSlowTransaction(`${prefix}-a`); // a higher sequence value than B's
      await slow.query('COMMIT');

      const read = await mine(head, prefix);
      expect(read.map((e) => e.id)).to.deep.equal([a.id, b.id]);
      expect(read[0]!.position.prepare > appended.position.prepare).to.equal(true);
      expectStrictlyIncreasing(read.map((e) => e.position));
      await eventually(() => collector.events.length === 2, 10_000, 'both events');
      expect(collector.ids()).to.deep.equal([a.id, b.id]);
    });

    it('that writes no event holds readers back too, and its commit (no NOTIFY) is noticed by polling', async () => {
      const prefix = uniqueStream('slow');
      const head = await store.headPosition();
      const collector = new Collector((s) => s.startsWith(prefix));
      store.subscribeToAll({ after: head, onEvents: collector.onEvents });

      await slow.query('BEGIN');
      await slow.query('SELECT pg_current_xact_id()');
      const b = newEvent('Fast');
      await store.appendToStream(`${prefix}-b`, [b], 'no_stream');
      await sleep(300);
      expect(collector.events).to.deep.equal([]);
      await slow.query('COMMIT');
      await eventually(() => collector.events.length === 1, 2_000, 'the event after the commit');
      expect(collector.ids()).to.deep.equal([b.id]);
    });

    it('that rolls back leaves no trace and releases the readers', async () => {
      const prefix = uniqueStream('slow');
      const head = await store.headPosition();
      const collector = new Collector((s) => s.startsWith(prefix));
      store.subscribeToAll({ after: head, onEvents: collector.onEvents });

      await slow.query('BEGIN');
      await insertInSlowTransaction(`${prefix}-a`);
      const b = newEvent('Fast');
      await store.appendToStream(`${prefix}-b`, [b], 'no_stream');
      await slow.query('ROLLBACK');
      await eventually(() => collector.events.length === 1, 2_000, 'the committed event');
      await sleep(300);
      expect(collector.ids()).to.deep.equal([b.id]);
      expect((await mine(head, prefix)).map((e) => e.id)).to.deep.equal([b.id]);
    });

    it('never makes a reader skip an event: many writers, some slow, against a subscription and a paging reader', async () => {
      const prefix = uniqueStream('many');
      const head = await store.headPosition();
      const collector = new Collector((s) => s.startsWith(prefix));
      store.subscribeToAll({ after: head, onEvents: collector.onEvents, batchSize: 7 });

      // A reader paging readAll by checkpoint while the writers run: what a projection does.
      const committed: string[] = [];
      const paged: RecordedEvent[] = [];
      let writing = true;
      const pager = (async () => {
        let checkpoint = head;
        const deadline = Date.now() + 30_000;
        while ((writing || paged.length < committed.length) && Date.now() < deadline) {
          const page = await store.readAll({ after: checkpoint, maxCount: 5 });
          paged.push(...page.filter((e) => e.streamName.startsWith(prefix)));
          if (page.length) checkpoint = page.at(-1)!.position;
          else await sleep(10);
        }
      })();

      const writers = Array.from({ length: 6 }, async (_, w) => {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        try {
          for (let i = 0; i < 15; i++) {
            const stream = `${prefix}-w${w}-${i}`;
            if (w % 2 === 0) {
              // Slow: the event is inserted, then the transaction sits open for a while.
              const e = newEvent('SlowWrite', { w, i });
              await client.query('BEGIN');
              await client.query(
                `INSERT INTO events (stream_name, stream_position, event_id, type, data, metadata) VALUES ($1, 0, $2, $3, $4, $5)`,
                [stream, e.id, e.type, JSON.stringify(e.data), JSON.stringify(e.metadata)],
              );
              await sleep(Math.random() * 40);
              if (i % 5 === 4) {
                await client.query('ROLLBACK');
              } else {
                await client.query('COMMIT');
                committed.push(e.id);
              }
            } else {
              const e = newEvent('FastWrite', { w, i });
              await store.appendToStream(stream, [e], 'no_stream');
              committed.push(e.id);
            }
          }
        } finally {
          await client.end();
        }
      });
      await Promise.all(writers);
      await eventually(() => collector.events.length >= committed.length, 15_000, 'every committed event');
      writing = false;
      await pager;
      await sleep(300);

      for (const seen of [collector.events, paged]) {
        expect(seen.map((e) => e.id)).to.have.members(committed); // every one, and each once
        expect(seen).to.have.length(committed.length);
        expectStrictlyIncreasing(seen.map((e) => e.position));
      }
      expect(paged.map((e) => e.id)).to.deep.equal(collector.ids());
    });
  });

  // With polling slowed to a minute, only a notification can deliver within these tests' time.
  describe('notifications', () => {
    const stores: PostgresEventStore[] = [];
    const open = (pollIntervalMs = 60_000) => {
      const store = createPostgresEventStore(url, { pollIntervalMs });
      stores.push(store);
      return store;
    };
    afterEach(async () => {
      await Promise.all(stores.splice(0).map((s) => s.close()));
    });

    async function listeningBackends(): Promise<number[]> {
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      try {
        const { rows } = await admin.query<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %' AND pid <> pg_backend_pid()`,
        );
        return rows.map((r) => r.pid);
      } finally {
        await admin.end();
      }
    }

    /** Two stores (two processes), and a subscription of the first to one fresh stream, listening. */
    async function listeningSubscription() {
      const reader = open();
      const writer = open();
      const head = await reader.headPosition();
      const stream = uniqueStream();
      const collector = new Collector((s) => s === stream);
      reader.subscribeToAll({ after: head, onEvents: collector.onEvents });
      await eventually(async () => (await listeningBackends()).length > 0, 5_000, 'the LISTEN connection');
      return { reader, writer, stream, collector };
    }

    it('wake a subscription at once for an append by this process and by another', async () => {
      const { reader, writer, stream, collector } = await listeningSubscription();

      await writer.appendToStream(stream, [newEvent()], 'no_stream'); // another process: NOTIFY
      await eventually(() => collector.events.length === 1, 3_000, 'the event from another process');
      await reader.appendToStream(stream, [newEvent()], 0); // this process: woken directly
      await eventually(() => collector.events.length === 2, 3_000, 'the event from this process');
    });

    it('resume after the LISTEN connection is lost', async () => {
      const { reader, writer, stream, collector } = await listeningSubscription();

      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      try {
        for (const pid of await listeningBackends()) await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      } finally {
        await admin.end();
      }
      await eventually(async () => (await listeningBackends()).length > 0, 5_000, 'the LISTEN connection to come back');
      await writer.appendToStream(stream, [newEvent()], 'no_stream');
      await eventually(() => collector.events.length === 1, 3_000, 'the event after reconnecting');
    });

    it('release the LISTEN connection when the last subscription stops', async () => {
      const reader = open();
      const sub = reader.subscribeToAll({ after: await reader.headPosition(), onEvents: async () => undefined });
      await eventually(async () => (await listeningBackends()).length > 0, 5_000, 'the LISTEN connection');
      await sub.stop();
      await eventually(async () => (await listeningBackends()).length === 0, 5_000, 'the LISTEN connection to close');
    });
  });

  describe('appends made together (one statement)', () => {
    it('fail one by one: data the server refuses fails only its own append', async () => {
      const store = createPostgresEventStore(url);
      try {
        const streams = [uniqueStream(), uniqueStream(), uniqueStream()];
        const outcomes = await Promise.allSettled([
          store.appendToStream(streams[0]!, [newEvent()], 'no_stream'),
          store.appendToStream(streams[1]!, [newEvent('ThingHappened', { text: 'nul\u0000' })], 'no_stream'), // jsonb holds no NUL
          store.appendToStream(streams[2]!, [newEvent()], 'no_stream'),
        ]);
        expect(outcomes.map((o) => o.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
        expect((await store.readStream(streams[0]!)).length).to.equal(1);
        expect((await store.readStream(streams[1]!)).length).to.equal(0);
        expect((await store.readStream(streams[2]!)).length).to.equal(1);
      } finally {
        await store.close();
      }
    });

    it('never deadlock when two processes append to the same streams in opposite orders', async () => {
      const [one, two] = [createPostgresEventStore(url), createPostgresEventStore(url)];
      try {
        const failures: unknown[] = [];
        for (let i = 0; i < 150; i++) {
          const [a, b] = [uniqueStream(), uniqueStream()];
          const outcomes = await Promise.allSettled([
            one.appendToStream(a, [newEvent()], 'any'),
            one.appendToStream(b, [newEvent()], 'any'),
            two.appendToStream(b, [newEvent()], 'any'),
            two.appendToStream(a, [newEvent()], 'any'),
          ]);
          for (const o of outcomes) if (o.status === 'rejected') failures.push(o.reason);
        }
        expect(failures.map(String)).to.deep.equal([]);
      } finally {
        await Promise.all([one.close(), two.close()]);
      }
    });
  });

  describe('positions and numbers', () => {
    it('keeps positions exact as bigint whatever int8 parser the process installed', async () => {
      // shared/db/knex.ts parses int8 as numbers; positions must not depend on it.
      const setTypeParser = pg.types.setTypeParser as (oid: number, parse: (v: string) => unknown) => void;
      const store = createPostgresEventStore(url);
      try {
        await store.appendToStream(uniqueStream(), [newEvent()], 'no_stream');
        const admin = new pg.Client({ connectionString: url });
        await admin.connect();
        try {
          await admin.query(`SELECT setval('events_global_position_seq', 9007199254740993)`); // 2^53 + 1
        } finally {
          await admin.end();
        }
        setTypeParser(pg.types.builtins.INT8, (v: string) => Number(v));
        const stream = uniqueStream();
        const result = await store.appendToStream(stream, [newEvent()], 'no_stream');
        expect(result.position.prepare).to.equal(9007199254740994n);
        const [read] = await store.readStream(stream);
        expect(read!.position.prepare).to.equal(9007199254740994n);
        expect(comparePositions(await store.headPosition(), result.position)).to.equal(0);
      } finally {
        setTypeParser(pg.types.builtins.INT8, (v: string) => {
          const n = Number(v);
          return Number.isSafeInteger(n) ? n : v;
        });
        await store.close();
      }
    });
  });
});
