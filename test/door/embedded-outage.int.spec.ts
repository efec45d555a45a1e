// `npm start`'s door path (door-gateway/embedded.ts: in-process bus, embedded MQTT broker, a
// simulated controller) when the active gateway's lock is lost, on a PostgreSQL of this suite's own
// (the shared server is never stopped): the lock session ended under it, then PostgreSQL stopped
// and started. Each time the gateway and its forwarder step down and start again once the lock is
// back, in the same process, and a revocation recorded afterwards reaches the controller.
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createKnex, type Knex } from '../../shared/db/knex.js';
import { freePort, startEmbeddedPostgres, withDatabase, type EmbeddedServer } from '../../shared/db/embedded-postgres.js';
import { migrateToLatest } from '../../shared/db/migrate.js';
import { createEventStore } from '../../shared/event-store/create-event-store.js';
import type { EventStore } from '../../shared/event-store/event-store.js';
import { eventSchemas } from '../../shared/domain/event-schemas.js';
import { startDoorPath, type DoorPath } from '../../door-gateway/embedded.js';
import { capturedLogger } from '../support/captured-logs.js';
import { eventually, newEvent, passCreated, passRevoked, testPass, type TestPass } from './fixtures.js';

const FACILITY = 11;

describe('embedded door path through a lost gateway lock (a private PostgreSQL)', function () {
  this.timeout(120_000);
  let dir: string;
  let port: number;
  let adminUrl: string;
  let server: EmbeddedServer | null = null;
  let knex: Knex | null = null;
  let store: EventStore | null = null;
  let door: DoorPath | null = null;
  const captured = capturedLogger();
  const count = (pattern: RegExp) => (captured.text().match(pattern) ?? []).length;
  const losses = () => count(/"msg":"lost the door-gateway lock/g);
  const terms = () => count(/"msg":"active door-gateway: holds its lock"/g);

  const startServer = async () => (server = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg'), port, persistent: true }));
  const create = async (pass: TestPass) => store!.appendToStream(`guest-invites-1-${pass.passId}`, [newEvent(passCreated(pass))], 'any');
  const revoke = async (pass: TestPass) => store!.appendToStream(`guest-invites-1-${pass.passId}`, [newEvent(passRevoked(pass))], 'any');
  const controller = () => {
    const found = door!.controllers.get(FACILITY)?.[0];
    if (!found) throw new Error(`no simulated controller for facility ${FACILITY} yet`);
    return found;
  };

  /** A revocation and a new pass recorded now both reach the door. */
  const doorsFollow = async (revoked: TestPass, label: string) => {
    const created = testPass(FACILITY);
    await revoke(revoked);
    await create(created);
    await eventually(() => {
      expect(controller().holds(revoked.publicId), `the pass revoked ${label}`).to.equal(undefined);
      expect(controller().holds(created.publicId), `the pass created ${label}`).to.not.equal(undefined);
    }, 20_000);
    return created;
  };

  before(async function () {
    this.timeout(180_000);
    dir = await mkdtemp(path.join(os.tmpdir(), 'guestpass-embedded-outage-'));
    port = await freePort();
    await startServer();
    adminUrl = `postgres://postgres:postgres@127.0.0.1:${port}/postgres`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query('CREATE DATABASE doors');
    await admin.end();
    const databaseUrl = withDatabase(adminUrl, 'doors');
    knex = createKnex(databaseUrl, { max: 5 });
    await migrateToLatest(knex);
    store = createEventStore({ databaseUrl, eventStoreUrl: null, schemas: eventSchemas, logger: captured.logger });
    door = await startDoorPath(
      { store, knex, logger: captured.logger, config: { kafkaBrokers: [], kafkaPassTopicPartitions: 1, mqttUrl: null, dataDir: dir } },
      { facilityPollMs: 100, recordBrokerUrl: false, lockPollMs: 100, lockMaxRetryMs: 500 },
    );
  });

  after(async () => {
    await door?.stop();
    await store?.close().catch(() => undefined);
    await knex?.destroy().catch(() => undefined);
    await server?.stop().catch(() => undefined);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  let held: TestPass;

  it('follows pass events to the simulated controller at first', async () => {
    expect(door!.bus.kind).to.equal('in-process');
    expect(door!.role.active).to.equal(true);
    held = testPass(FACILITY);
    await create(held);
    await eventually(() => expect(controller().holds(held.publicId)).to.not.equal(undefined), 15_000);
    await eventually(() => door!.readinessCheck.check());
  });

  it('steps down when its lock session ends, takes the lock again, and the doors follow a revocation', async () => {
    const first = door!.gateway;
    expect(first).to.not.equal(null);
    const [lost, began] = [losses(), terms()];
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    try {
      const { rowCount } = await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'doors' AND application_name = 'guestpass door-gateway lock'");
      expect(rowCount, 'the lock sessions ended').to.equal(1);
    } finally {
      await admin.end();
    }
    await eventually(() => expect(losses(), 'the loss told').to.equal(lost + 1), 10_000);
    await eventually(() => expect(terms(), 'a new term').to.equal(began + 1), 10_000);
    expect(door!.gateway, 'a new gateway, not the stopped one').to.not.equal(null).and.not.equal(first);
    held = await doorsFollow(held, 'after the lock came back');
  });

  it('steps down while PostgreSQL is down, and starts again in the same process once it is back', async () => {
    const first = door!.gateway;
    const [lost, began] = [losses(), terms()];
    await server!.stop();
    server = null;
    await eventually(() => expect(door!.gateway, 'the gateway while the database is down').to.equal(null), 15_000);
    expect(door!.role.active).to.equal(false);
    let notReady = '';
    await door!.readinessCheck.check().catch((error: Error) => (notReady = error.message));
    expect(notReady, '/readyz mqtt while the database is down').to.match(/standby/);

    await startServer();
    await eventually(() => expect(door!.gateway, 'a gateway once the database is back').to.not.equal(null), 30_000);
    expect(door!.gateway, 'a new gateway, not the stopped one').to.not.equal(first);
    expect(losses(), 'one loss told').to.equal(lost + 1);
    expect(terms(), 'one new term').to.equal(began + 1);
    await eventually(() => door!.readinessCheck.check(), 10_000);
    await eventually(() => store!.headPosition(), 30_000); // the store's pool has its connections back
    await doorsFollow(held, 'after the outage');
  });
});
