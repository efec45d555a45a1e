// A door-gateway process in a child process, for the crash test: SIGKILLed mid-stream and started
// again. It runs the production role (door-gateway/gateway-role.ts), as door-gateway/main.ts does:
// its gateway starts once it holds the active gateway's lock, which PostgreSQL releases when the
// killed one's session ends.
// Env: DATABASE_URL, KAFKA_BROKERS, MQTT_URL, TOPIC_SUFFIX, GATEWAY_CLIENT_ID, GATEWAY_GROUP.
import { createKnex } from '../../../shared/db/knex.js';
import { createEventStore } from '../../../shared/event-store/create-event-store.js';
import { eventSchemas } from '../../../shared/domain/event-schemas.js';
import { KafkaPassBus } from '../../../shared/pass-bus/kafka-pass-bus.js';
import { createLogger } from '../../../shared/logger.js';
import { runDoorGatewayRole } from '../../../door-gateway/gateway-role.js';

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};
const logger = createLogger(process.env.LOG_LEVEL ?? 'silent', 'gateway-child');
const knex = createKnex(env('DATABASE_URL'), { max: 4 });
// The role's door access reactor would append to it; the crash test runs none (reactor: false).
const store = createEventStore({ databaseUrl: env('DATABASE_URL'), eventStoreUrl: null, schemas: eventSchemas });
const bus = new KafkaPassBus({
  brokers: env('KAFKA_BROKERS').split(','),
  passTopicPartitions: 3,
  topicSuffix: env('TOPIC_SUFFIX'),
  maxWaitTimeMs: 100,
  sessionTimeoutMs: 6000,
  logger,
});
const role = runDoorGatewayRole({
  knex,
  store,
  bus,
  mqttUrl: env('MQTT_URL'),
  logger,
  reactor: false,
  gateway: { clientId: env('GATEWAY_CLIENT_ID'), groupId: env('GATEWAY_GROUP'), forwardAccessEvents: false },
});
// Rejects if the first gateway failed to start (the test then sees this process fail).
await role.firstStart;
process.stdout.write('ready\n');
