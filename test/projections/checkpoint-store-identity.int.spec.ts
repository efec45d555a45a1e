// The event store's identity beside the checkpoints: two PostgreSQL event stores (two databases,
// two logs) against one read-model database, as when EVENTSTORE_URL is pointed at another store
// or a store is wiped while the read models are kept.
import { expect } from 'chai';
import { ProjectionRunner } from '../../projections/runner.js';
import { rebuildProjections } from '../../projections/rebuild.js';
import { projectionStatus, formatStatus, statusToJson } from '../../projections/status.js';
import { PassEventForwarder } from '../../projections/pass-event-forwarder.js';
import { EventStoreMismatch, recordedCheckpointStore, requireCheckpointStore } from '../../projections/checkpoint-store-identity.js';
import { createEventStore } from '../../shared/event-store/create-event-store.js';
import { createPostgresEventStore } from '../../shared/event-store/postgres-event-store.js';
import { eventSchemas } from '../../shared/domain/event-schemas.js';
import { InProcessPassBus } from '../../shared/pass-bus/in-process-pass-bus.js';
import type { EventStore } from '../../shared/event-store/event-store.js';
import { createLogger } from '../../shared/logger.js';
import { migratedDatabase } from '../support/database.js';
import { LogWriter, openTestDb, waitForCheckpoints, type TestDb } from './log-writer.js';

const silent = createLogger('silent');

async function rejection(work: Promise<unknown>): Promise<Error> {
  try {
    await work;
  } catch (error) {
    return error as Error;
  }
  expect.fail('expected a rejection');
}

async function caughtUp(forwarder: PassEventForwarder): Promise<void> {
  for (let i = 0; i < 400 && !(await forwarder.status()).caughtUp; i++) await new Promise((r) => setTimeout(r, 25));
  expect((await forwarder.status()).caughtUp, 'the forwarder followed the store to its head').to.equal(true);
}

async function count(db: TestDb, sql: string): Promise<number> {
  const { rows } = await db.knex.raw<{ rows: Array<{ n: string | number }> }>(sql);
  return Number(rows[0]!.n);
}

describe('event store identity beside the checkpoints (PostgreSQL event stores)', function () {
  this.timeout(60_000);
  /** The read models, and the event store in the same database (store A). */
  let db: TestDb;
  /** Another PostgreSQL event store, in a database of its own (store B). */
  let other: { url: string; store: EventStore; log: LogWriter; close(): Promise<void> };
  const running: Array<{ stop(): Promise<void> }> = [];

  const runnerOver = (store: EventStore) => new ProjectionRunner({ knex: db.knex, store, subjectKeys: db.subjectKeys, logger: silent }, { batchSize: 50 });
  const forwarderOver = (store: EventStore) =>
    new PassEventForwarder({ store, knex: db.knex, bus: new InProcessPassBus({ awaitConsumers: false }), logger: silent, retry: { initialMs: 10, maxMs: 50 } });
  async function started<T extends { start(): Promise<void>; stop(): Promise<void> }>(reader: T): Promise<T> {
    running.push(reader);
    await reader.start();
    return reader;
  }

  beforeEach(async () => {
    db = await openTestDb('store_identity');
    const b = await migratedDatabase('store_identity_b');
    await b.knex.destroy();
    const store = createEventStore({ databaseUrl: b.url, eventStoreUrl: null, schemas: eventSchemas });
    other = { url: b.url, store, log: new LogWriter(store, db.subjectKeys), close: () => store.close() };
  });

  afterEach(async () => {
    await Promise.all(running.splice(0).map((r) => r.stop()));
    await other.close();
    await db.close();
  });

  it('each PostgreSQL log has an identity of its own, the same for every process that opens it', async () => {
    const a = await db.store.identity();
    expect(a).to.match(/^postgresql:[0-9a-f-]{36}$/);
    const again = createPostgresEventStore(db.url);
    try {
      expect(await again.identity()).to.equal(a);
    } finally {
      await again.close();
    }
    expect(await other.store.identity()).to.not.equal(a);
  });

  it('the runner and the forwarder refuse the checkpoints of another store, naming both and the fix; a full rebuild adopts it', async () => {
    const [a, b] = [await db.store.identity(), await other.store.identity()];
    await db.log.organization(1);
    await db.log.passes(1, 3);
    const runner = await started(runnerOver(db.store));
    await caughtUp(await started(forwarderOver(db.store)));
    await waitForCheckpoints(db.knex, db.log.last);
    expect(await recordedCheckpointStore(db.knex)).to.equal(a);
    await Promise.all(running.splice(0).map((r) => r.stop()));
    expect(runner.status().every((p) => p.state === 'live')).to.equal(true);

    // EVENTSTORE_URL (here: the event store's database) now names store B, with a log of its own.
    await other.log.organization(1);
    await other.log.passes(1, 2);
    for (const reader of [runnerOver(other.store), forwarderOver(other.store)]) {
      const error = await rejection(reader.start());
      expect(error).to.be.instanceOf(EventStoreMismatch);
      expect(error.message).to.contain(`count events of event store ${a}, but the configured event store is ${b}`);
      expect(error.message).to.contain('`npx guestpass projections rebuild`');
      await reader.stop();
    }
    const report = await projectionStatus({ knex: db.knex, store: other.store });
    expect(report.eventStore).to.deep.equal({ identity: b, checkpointsCountIn: a });
    expect(formatStatus(report).split('\n')[0]).to.contain(`event store ${b}, but the checkpoints count in ${a}`);
    expect(statusToJson(report)).to.include({ event_store: b, checkpoints_event_store: a });

    // A rebuild of every read model from B adopts it; the forwarder starts again from B's beginning.
    const { rows: before } = await db.knex.raw<{ rows: Array<{ c: string; n: string }> }>(
      "SELECT commit_position::text AS c, events_forwarded::text AS n FROM forwarder_checkpoints WHERE name = 'pass-event-forwarder'",
    );
    expect(before[0]!.c).to.not.equal('0');
    await rebuildProjections(undefined, { knex: db.knex, store: other.store, subjectKeys: db.subjectKeys, logger: silent });
    expect(await recordedCheckpointStore(db.knex)).to.equal(b);
    const { rows: after } = await db.knex.raw<{ rows: Array<{ c: string; p: string; n: string }> }>(
      "SELECT commit_position::text AS c, prepare_position::text AS p, events_forwarded::text AS n FROM forwarder_checkpoints WHERE name = 'pass-event-forwarder'",
    );
    expect(after[0]).to.deep.equal({ c: '0', p: '0', n: before[0]!.n });
    expect(await count(db, 'SELECT count(*) AS n FROM pass_list')).to.equal(2); // B's passes, not A's

    await started(runnerOver(other.store));
    const forwarder = await started(forwarderOver(other.store));
    await other.log.passes(1, 1);
    await waitForCheckpoints(db.knex, other.log.last);
    expect(await count(db, 'SELECT count(*) AS n FROM pass_list')).to.equal(3);
    await caughtUp(forwarder);
    expect((await forwarder.status()).position).to.deep.equal(await other.store.headPosition());

    // And now store A is the stranger.
    expect(await rejection(runnerOver(db.store).start())).to.be.instanceOf(EventStoreMismatch);
  });

  it('a rebuild of only some read models cannot adopt another store', async () => {
    await db.log.organization(1);
    await started(runnerOver(db.store));
    await waitForCheckpoints(db.knex, db.log.last);
    const error = await rejection(rebuildProjections(['pass_list'], { knex: db.knex, store: other.store, subjectKeys: db.subjectKeys, logger: silent }));
    expect(error).to.be.instanceOf(EventStoreMismatch);
    expect(error.message).to.contain('a rebuild of only some read models').and.contain('left out').and.contain('with no projection names');
    expect(await recordedCheckpointStore(db.knex)).to.equal(await db.store.identity());
  });

  it('checkpoints from before the record are taken to be the store’s, unless one is past the end of its log', async () => {
    await db.log.organization(1);
    await db.log.passes(1, 3);
    await started(runnerOver(db.store));
    await waitForCheckpoints(db.knex, db.log.last);
    await Promise.all(running.splice(0).map((r) => r.stop()));

    // As a database upgraded to migration 012 is: checkpoints, and no record of their store.
    await db.knex.raw('DELETE FROM checkpoint_event_store');
    // An empty store (a wiped volume): every checkpoint is past its end.
    const error = await rejection(requireCheckpointStore(db.knex, other.store));
    expect(error).to.be.instanceOf(EventStoreMismatch);
    expect(error.message).to.contain(`past the end of the configured event store ${await other.store.identity()}`);
    expect(await recordedCheckpointStore(db.knex)).to.equal(null);

    // The store they came from is recorded, and the runner starts.
    await started(runnerOver(db.store));
    expect(await recordedCheckpointStore(db.knex)).to.equal(await db.store.identity());
  });
});
