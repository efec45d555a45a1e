// The external components of the door-path suites: the CI Kafka broker (.ci/kafka/start.sh) and
// Mosquitto (.ci/mosquitto.sh). In CI a missing one fails the suite; elsewhere it is skipped.
import { randomBytes } from 'node:crypto';
import { requireComponent, tcpReachable } from '../../support/components.js';
import { KafkaPassBus } from '../../../shared/pass-bus/kafka-pass-bus.js';
import { createLogger } from '../../../shared/logger.js';

export const KAFKA_BROKERS = (process.env.KAFKA_BROKERS?.trim() || '127.0.0.1:9092').split(',').map((b) => b.trim());
export const MOSQUITTO_URL = process.env.MQTT_URL?.trim() || 'mqtt://127.0.0.1:1883';

function hostPort(address: string, defaultPort: number): { host: string; port: number } {
  const url = address.includes('://') ? new URL(address) : new URL(`tcp://${address}`);
  return { host: url.hostname, port: Number(url.port || defaultPort) };
}

export async function requireKafka(context: Mocha.Context): Promise<void> {
  const { host, port } = hostPort(KAFKA_BROKERS[0]!, 9092);
  requireComponent(context, 'Kafka', await tcpReachable(host, port), `${host}:${port}; start it with .ci/kafka/start.sh`);
}

export async function requireMosquitto(context: Mocha.Context): Promise<void> {
  const { host, port } = hostPort(MOSQUITTO_URL, 1883);
  requireComponent(context, 'Mosquitto', await tcpReachable(host, port), `${host}:${port}; start it with .ci/mosquitto.sh`);
}

export const testLogger = createLogger(process.env.LOG_LEVEL ?? 'silent', 'door-test');

/** A Kafka bus on topics of its own (suffix), so test runs never see each other's messages. */
export function kafkaTestBus(partitions = 3, suffix = `.test-${randomBytes(4).toString('hex')}`, brokers: readonly string[] = KAFKA_BROKERS, topicPrefix = ''): KafkaPassBus {
  return new KafkaPassBus({
    brokers,
    passTopicPartitions: partitions,
    clientId: 'guestpass-test',
    logger: testLogger,
    maxWaitTimeMs: 100,
    // The broker's minimum: a killed member's partitions move on quickly.
    sessionTimeoutMs: 6000,
    topicPrefix,
    topicSuffix: suffix,
  });
}
