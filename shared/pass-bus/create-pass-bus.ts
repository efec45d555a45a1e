// Adapter selection: KAFKA_BROKERS set -> Kafka, else the in-process bus of the embedded default.
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { InProcessPassBus } from './in-process-pass-bus.js';
import { KafkaPassBus } from './kafka-pass-bus.js';
import type { PassBus } from './pass-bus.js';

export function createPassBus(
  config: Pick<Config, 'kafkaBrokers' | 'kafkaPassTopicPartitions'> & Partial<Pick<Config, 'kafkaTopicPrefix'>>,
  logger?: Logger,
  clientId = 'guestpass',
): PassBus {
  if (config.kafkaBrokers.length === 0) return new InProcessPassBus();
  return new KafkaPassBus({
    brokers: config.kafkaBrokers,
    passTopicPartitions: config.kafkaPassTopicPartitions,
    clientId,
    topicPrefix: config.kafkaTopicPrefix ?? '',
    ...(logger ? { logger } : {}),
  });
}
