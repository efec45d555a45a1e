// The door-gateway process's work through a database outage (door-gateway/gateway-role.ts), on a
// PostgreSQL of this suite's own (the shared server is never stopped), the in-process bus and an
// embedded MQTT broker: when PostgreSQL stops, the active gateway loses its lock, stops its door
// work and says it is a standby on /readyz, without ending anything else; once PostgreSQL is back
// it takes the lock again, starts a new gateway, and the doors follow the pass events again.
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
import { InProcessPassBus } from '../../shared/pass-bus/in-process-pass-bus.js';
import { PASS_EVENTS_TOPIC } from '../../shared/pass-bus/pass-bus.js';
import { toPassEventMessage } from '../../shared/pass-bus/pass-event-message.js';
import { startEmbeddedBroker, type EmbeddedBroker } from '../../door-gateway/embedded-broker.js';
import { ControllerSimulator } from '../../door-gateway/controller-simulator.js';
import { runDoorGatewayRole, type DoorGatewayRole } from '../../door-gateway/gateway-role.js';
import { capturedLogger } from '../support/captured-logs.js';
import { eventually, passCreated, passRevoked, recorded, testPass } from './fixtures.js';

const FACILITY = 7;

describe('door-gateway role through a PostgreSQL outage (a private server)', function () {
  this.timeout(120_000);
  let dir: string;
  let port: number;
  let server: EmbeddedServer | null = null;
  let knex: Knex | null = null;
  let store: EventStore | null = null;
  let broker: EmbeddedBroker | null = null;
  let bus: InProcessPassBus | null = null;
  let controller: ControllerSimulator | null = null;
  let role: DoorGatewayRole | null = null;

  const startServer = async () => (server = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg'), port, persistent: true }));

  before(async function () {
    this.timeout(180_000);
    dir = await mkdtemp(path.join(os.tmpdir(), 'guestpass-gateway-outage-'));
    port = await freePort();
    await startServer();
    const admin = new pg.Client({ connectionString: `postgres://postgres:postgres@127.0.0.1:${port}/postgres` });
    await admin.connect();
    await admin.query('CREATE DATABASE doors');
    await admin.end();
    const databaseUrl = withDatabase(`postgres://postgres:postgres@127.0.0.1:${port}/postgres`, 'doors');
    knex = createKnex(databaseUrl, { max: 5 });
    await migrateToLatest(knex);
    store = createEventStore({ databaseUrl, eventStoreUrl: null, schemas: eventSchemas, logger: capturedLogger().logger });
    broker = await startEmbeddedBroker();
    bus = new InProcessPassBus({ awaitConsumers: false });
    controller = new ControllerSimulator({ url: broker.url, facilityId: FACILITY, controllerId: 'door-1', statusIntervalMs: 1000 });
    await controller.start();
  });

  after(async () => {
    await role?.stop();
    await controller?.stop().catch(() => undefined);
    await bus?.close();
    await store?.close().catch(() => undefined);
    await knex?.destroy().catch(() => undefined);
    await broker?.close();
    await server?.stop().catch(() => undefined);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('stops its door work while PostgreSQL is down, says so on /readyz, and takes over again once it is back', async () => {
    const captured = capturedLogger();
    role = runDoorGatewayRole({ knex: knex!, store: store!, bus: bus!, mqttUrl: broker!.url, logger: captured.logger, pollMs: 100, maxRetryMs: 500 });
    await role.firstActive;
    const first = role.gateway;
    expect(first, 'the running gateway').to.not.equal(null);
    await eventually(() => role!.readinessCheck.check());

    const before = testPass(FACILITY);
    await bus!.publish(PASS_EVENTS_TOPIC, [toPassEventMessage(recorded(passCreated(before), `guest-invites-1-${before.passId}`, 0))]);
    await eventually(() => expect(controller!.holds(before.publicId), 'the pass created before the outage').to.not.equal(undefined));

    await server!.stop();
    server = null;
    await eventually(() => expect(role!.gateway, 'the gateway while the database is down').to.equal(null), 10_000);
    expect(role.active).to.equal(false);
    let notReady = '';
    await role.readinessCheck.check().catch((error: Error) => (notReady = error.message));
    expect(notReady, '/readyz while the database is down').to.match(/standby/);

    await startServer();
    await eventually(() => expect(role!.gateway, 'a gateway once the database is back').to.not.equal(null), 30_000);
    expect(role.active).to.equal(true);
    expect(role.gateway, 'a new gateway, not the stopped one').to.not.equal(first);
    await eventually(() => role!.readinessCheck.check(), 10_000);

    // The doors follow the pass events again: a revocation and a new pass.
    const after = testPass(FACILITY);
    await bus!.publish(PASS_EVENTS_TOPIC, [
      toPassEventMessage(recorded(passRevoked(before), `guest-invites-1-${before.passId}`, 1)),
      toPassEventMessage(recorded(passCreated(after), `guest-invites-1-${after.passId}`, 0)),
    ]);
    await eventually(() => {
      expect(controller!.holds(before.publicId), 'the pass revoked after the outage').to.equal(undefined);
      expect(controller!.holds(after.publicId), 'the pass created after the outage').to.not.equal(undefined);
    }, 15_000);
    const log = captured.text();
    expect(log.match(/"msg":"lost the door-gateway lock/g) ?? [], 'losses told').to.have.length(1);
    expect(log.match(/"msg":"active door-gateway: holds its lock"/g) ?? [], 'terms as the active one').to.have.length(2);
  });
});
