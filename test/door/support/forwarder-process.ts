// The pass event forwarder in a child process, for the crash test.
// Env: DATABASE_URL, KAFKA_BROKERS, TOPIC_SUFFIX.
import { createKnex } from '../../../shared/db/knex.js';
import { createEventStore } from '../../../shared/event-store/create-event-store.js';
import { KafkaPassBus } from '../../../shared/pass-bus/kafka-pass-bus.js';
import { createLogger } from '../../../shared/logger.js';
import { PassEventForwarder } from '../../../projections/pass-event-forwarder.js';
import { eventSchemas } from '../../../shared/domain/event-schemas.js';

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};
const logger = createLogger(process.env.LOG_LEVEL ?? 'silent', 'forwarder-child');
const knex = createKnex(env('DATABASE_URL'), { max: 2 });
const store = createEventStore({ databaseUrl: env('DATABASE_URL'), eventStoreUrl: null, schemas: eventSchemas });
const bus = new KafkaPassBus({ brokers: env('KAFKA_BROKERS').split(','), passTopicPartitions: 3, topicSuffix: env('TOPIC_SUFFIX'), logger });
const forwarder = new PassEventForwarder({ store, knex, bus, logger, batchSize: 20 });
await forwarder.start();
process.stdout.write('ready\n');
