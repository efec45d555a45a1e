// The door-gateway as its own process (docker-compose `door-gateway`):
//   KAFKA_BROKERS, MQTT_URL and DATABASE_URL required; EVENTSTORE_URL when the log is EventStoreDB
//   (the door access reactor appends to it); KAFKA_PASS_TOPIC_PARTITIONS, LOG_LEVEL optional.
// Runs the gateway (pass events -> MQTT, controllers -> access events) and the door access
// reactor (access events -> event log). The forwarder runs in the projections process.
import { ConfigError, loadConfig } from '../shared/config.js';
import { createLogger } from '../shared/logger.js';
import { createKnex } from '../shared/db/knex.js';
import { migrateToLatest } from '../shared/db/migrate.js';
import { createEventStore } from '../shared/event-store/create-event-store.js';
import { eventSchemas } from '../shared/domain/event-schemas.js';
import { KafkaPassBus } from '../shared/pass-bus/kafka-pass-bus.js';
import { DoorGateway } from './door-gateway.js';
import { KnexDoorCredentialStore } from './credential-store.js';
import { DoorAccessReactor } from './door-access-reactor.js';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, 'door-gateway');
  if (config.kafkaBrokers.length === 0) throw new ConfigError('KAFKA_BROKERS is required to run the door-gateway alone');
  if (!config.mqttUrl) throw new ConfigError('MQTT_URL is required to run the door-gateway alone');
  if (!config.databaseUrl) throw new ConfigError('DATABASE_URL is required to run the door-gateway alone');

  const knex = createKnex(config.databaseUrl, { max: 5 });
  await migrateToLatest(knex);
  const store = createEventStore({ databaseUrl: config.databaseUrl, eventStoreUrl: config.eventStoreUrl, schemas: eventSchemas });
  const bus = new KafkaPassBus({
    brokers: config.kafkaBrokers,
    passTopicPartitions: config.kafkaPassTopicPartitions,
    clientId: 'guestpass-door-gateway',
    logger,
  });
  const gateway = new DoorGateway({ bus, store: new KnexDoorCredentialStore(knex), mqttUrl: config.mqttUrl, logger });
  await gateway.start();

  const reactor = new DoorAccessReactor({ bus, store, knex, logger });
  await reactor.start();

  let stopping = false;
  const shutdown = async (signal: string, code = 0) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'door-gateway stopping');
    const force = setTimeout(() => process.exit(1), 15_000);
    force.unref();
    await reactor.stop();
    await gateway.stop();
    await bus.close();
    await store.close();
    await knex.destroy();
    process.exit(code);
  };
  // Restarted (compose's restart policy), it waits as a standby until it is the only active one again.
  gateway.on('leadership-lost', () => void shutdown('lost the active-gateway lock', 1));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((error) => {
  console.error(error instanceof ConfigError ? `door-gateway: ${error.message}` : error);
  process.exit(1);
});
