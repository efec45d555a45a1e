// `npm start`'s door path with KAFKA_BROKERS and MQTT_URL set (door-gateway/embedded.ts on the
// real brokers): the forwarder runs under its own lock, as in the projections processes, beside the
// gateway's role, and a pass and its revocation reach a simulated controller.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { mkdtemp, rm } from 'node:fs/promises';
import { startDoorPath, type DoorPath } from '../../door-gateway/embedded.js';
import { migratedDatabase } from '../support/database.js';
import type { Knex } from '../../shared/db/knex.js';
import { createEventStore } from '../../shared/event-store/create-event-store.js';
import type { EventStore } from '../../shared/event-store/event-store.js';
import { eventSchemas } from '../../shared/domain/event-schemas.js';
import { uniqueFacilityId } from './support/door-harness.js';
import { KAFKA_BROKERS, MOSQUITTO_URL, requireKafka, requireMosquitto, testLogger } from './support/door-components.js';
import { eventually, newEvent, passCreated, passRevoked, testPass } from './fixtures.js';

describe('embedded door path on Kafka and Mosquitto', function () {
  this.timeout(90_000);
  let dataDir: string;
  let knex: Knex;
  let store: EventStore;
  let door: DoorPath | undefined;

  before(async function () {
    await requireKafka(this);
    await requireMosquitto(this);
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'gp-door-kafka-'));
    const migrated = await migratedDatabase('door_embedded_kafka');
    knex = migrated.knex;
    store = createEventStore({ databaseUrl: migrated.url, eventStoreUrl: null, schemas: eventSchemas });
    const run = randomBytes(4).toString('hex');
    door = await startDoorPath(
      {
        store,
        knex,
        logger: testLogger,
        // Topics and MQTT root of this run's own: other runs on the shared brokers never see them.
        config: { kafkaBrokers: KAFKA_BROKERS, kafkaPassTopicPartitions: 1, kafkaTopicPrefix: `test-${run}.`, mqttUrl: MOSQUITTO_URL, mqttTopicRoot: `test-${run}/guestpass/v1`, dataDir },
      },
      { controllersPerFacility: 1, facilityPollMs: 100 },
    );
  });

  after(async () => {
    await door?.stop();
    await store?.close();
    await knex?.destroy();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('forwards under the forwarder lock, and a pass and its revocation reach the controller', async () => {
    expect(door!.bus.kind).to.equal('kafka');
    await eventually(async () => {
      const { rows } = await knex.raw<{ rows: { name: string }[] }>(
        "SELECT application_name AS name FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'guestpass % lock' ORDER BY 1",
      );
      expect(rows.map((r) => r.name)).to.deep.equal(['guestpass door-gateway lock', 'guestpass pass event forwarder lock']);
    });
    const facility = uniqueFacilityId();
    const pass = testPass(facility);
    const stream = `guest-invites-1-${pass.passId}`;
    await store.appendToStream(stream, [newEvent(passCreated(pass))], 'any');
    const controller = () => {
      const found = door!.controllers.get(facility)?.[0];
      if (!found) throw new Error('no simulated controller yet');
      return found;
    };
    await eventually(() => expect(controller().holds(pass.publicId)).to.not.equal(undefined), 30_000);
    await store.appendToStream(stream, [newEvent(passRevoked(pass))], 'any');
    await eventually(() => expect(controller().holds(pass.publicId)).to.equal(undefined), 15_000);
  });
});
