// The door-gateway as its own process (docker-compose `door-gateway`):
//   KAFKA_BROKERS, MQTT_URL and DATABASE_URL required; EVENTSTORE_URL when the log is EventStoreDB
//   (the door access reactor appends to it); KAFKA_PASS_TOPIC_PARTITIONS, LOG_LEVEL optional.
// Runs the gateway (pass events -> MQTT, controllers -> access events) and the door access
// reactor (access events -> event log). The forwarder runs in the projections process.
import { ConfigError, loadConfig } from '../shared/config.js';
import { createLogger } from '../shared/logger.js';
import { describeStartupError } from '../shared/startup-error.js';
import { createKnex } from '../shared/db/knex.js';
import { migrateToLatest } from '../shared/db/migrate.js';
import { createEventStore } from '../shared/event-store/create-event-store.js';
import { eventSchemas } from '../shared/domain/event-schemas.js';
import { KafkaPassBus } from '../shared/pass-bus/kafka-pass-bus.js';
import { runDoorGatewayRole } from './gateway-role.js';
import { runService } from '../shared/http/serve.js';
import { databaseCheck, eventStoreCheck, kafkaCheck } from '../shared/http/readiness.js';
import { untilAborted } from '../shared/until-aborted.js';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, 'door-gateway', config.logFormat);
  if (config.kafkaBrokers.length === 0) throw new ConfigError('KAFKA_BROKERS is required to run the door-gateway alone');
  if (!config.mqttUrl) throw new ConfigError('MQTT_URL is required to run the door-gateway alone');
  if (!config.databaseUrl) throw new ConfigError('DATABASE_URL is required to run the door-gateway alone');

  const databaseUrl = config.databaseUrl;
  const mqttUrl = config.mqttUrl;
  // Its port serves only /healthz, /readyz (database, event store, Kafka, MQTT) and /metrics (its
  // lag behind the pass bus, revocation-to-door-ack latency). A standby answers 503 on /readyz,
  // and so does an active one that lost its lock (a database outage) until it holds it again.
  await runService({ config, logger, name: 'door-gateway' }, async (_server, control) => {
    const started: Array<() => Promise<void>> = [];
    const close = async () => {
      logger.info('door-gateway stopping');
      const force = setTimeout(() => process.exit(1), 15_000);
      force.unref();
      for (const stop of started.splice(0).reverse()) await stop();
    };
    try {
      const knex = createKnex(databaseUrl, { max: 5 });
      started.push(() => knex.destroy());
      await migrateToLatest(knex);
      const store = createEventStore({ databaseUrl, eventStoreUrl: config.eventStoreUrl, schemas: eventSchemas, logger });
      started.push(() => store.close());
      const bus = new KafkaPassBus({
        brokers: config.kafkaBrokers,
        passTopicPartitions: config.kafkaPassTopicPartitions,
        topicPrefix: config.kafkaTopicPrefix,
        clientId: 'guestpass-door-gateway',
        logger,
        // The broker's minimum: a standby that took over from a killed gateway gets its partitions
        // once the dead member's session ends, so this bounds the takeover (about 7 s in all).
        sessionTimeoutMs: 6000,
      });
      started.push(() => bus.close());
      // The gateway and the reactor run while this process holds the active gateway's lock; losing
      // it (a database outage) stops them and this process waits as a standby, not ending.
      const role = runDoorGatewayRole({ knex, store, bus, mqttUrl, logger, ...(config.mqttTopicRoot ? { topicRoot: config.mqttTopicRoot } : {}) });
      started.push(() => role.stop());
      // A standby waits here for its first turn (its port answers 503 meanwhile); a signal ends the wait.
      await untilAborted(role.firstActive, control.stopping);
      return { app: null, checks: [databaseCheck(knex), eventStoreCheck(store), kafkaCheck(bus), role.readinessCheck], close };
    } catch (error) {
      await close().catch(() => undefined);
      throw error;
    }
  });
}

main().catch((error: unknown) => {
  console.error(`door-gateway: ${describeStartupError(error)}`);
  process.exit(1);
});
