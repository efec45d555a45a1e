// A door-gateway in a child process, for the crash test: SIGKILLed mid-stream and started again.
// Env: DATABASE_URL, KAFKA_BROKERS, MQTT_URL, TOPIC_SUFFIX, GATEWAY_CLIENT_ID, GATEWAY_GROUP.
import { createKnex } from '../../../shared/db/knex.js';
import { KafkaPassBus } from '../../../shared/pass-bus/kafka-pass-bus.js';
import { createLogger } from '../../../shared/logger.js';
import { DoorGateway } from '../../../door-gateway/door-gateway.js';
import { KnexDoorCredentialStore } from '../../../door-gateway/credential-store.js';

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};
const logger = createLogger(process.env.LOG_LEVEL ?? 'silent', 'gateway-child');
const knex = createKnex(env('DATABASE_URL'), { max: 4 });
const bus = new KafkaPassBus({
  brokers: env('KAFKA_BROKERS').split(','),
  passTopicPartitions: 3,
  topicSuffix: env('TOPIC_SUFFIX'),
  maxWaitTimeMs: 100,
  sessionTimeoutMs: 6000,
  logger,
});
const gateway = new DoorGateway({
  bus,
  store: new KnexDoorCredentialStore(knex),
  mqttUrl: env('MQTT_URL'),
  logger,
  clientId: env('GATEWAY_CLIENT_ID'),
  groupId: env('GATEWAY_GROUP'),
  forwardAccessEvents: false,
});
await gateway.start();
process.stdout.write('ready\n');
