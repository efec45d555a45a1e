// The Kafka adapter of the pass bus (kafkajs). Selected by KAFKA_BROKERS.
//
// * Producer: idempotent (acks from all in-sync replicas, broker-side dedupe of retried batches),
//   Java-compatible partitioner, so a pass id always lands on the same partition whichever client wrote it.
// * Consumers: manual commits. A batch's offsets are committed only after the handler resolved;
//   a failing handler is retried in place with back-off (heartbeating, so the member keeps its
//   partitions) until it succeeds or the partition is taken away, never skipped. A consumer that
//   kafkajs gives up on is replaced (kafka-member.ts).
// * Topics are created at start with the configured partition count (auto-creation is off on the
//   CI broker so that a misspelt topic fails loudly).
import net from 'node:net';
import tls from 'node:tls';
import kafkajs, { type Admin, type ISocketFactory, type LogEntry, type Producer } from 'kafkajs';
import { KafkaMember } from './kafka-member.js';
import type { Logger } from '../logger.js';
import {
  BusClosedError,
  DOOR_EVENTS_TOPIC,
  HEADERS,
  PASS_EVENTS_TOPIC,
  type BusConsumer,
  type BusMessage,
  type ConsumeOptions,
  type PassBus,
} from './pass-bus.js';

const { Kafka, Partitioners, logLevel } = kafkajs;
type KafkaClient = InstanceType<typeof Kafka>;

/**
 * kafkajs's default sockets leave Nagle's algorithm on, which holds small requests (one
 * revocation) back for tens of milliseconds on an idle connection: the door path wants them sent now.
 */
const socketFactory: ISocketFactory = ({ host, port, ssl, onConnect }) => {
  const socket = ssl
    ? tls.connect({ host, port, ...(net.isIP(host) ? {} : { servername: host }), ...ssl }, onConnect)
    : net.connect({ host, port }, onConnect);
  socket.setKeepAlive(true, 60_000);
  socket.setNoDelay(true);
  return socket;
};

export interface KafkaPassBusOptions {
  readonly brokers: readonly string[];
  /** Partitions of guestpass.pass-events (KAFKA_PASS_TOPIC_PARTITIONS). */
  readonly passTopicPartitions: number;
  /** Partitions of guestpass.door-events (default: the same). */
  readonly doorTopicPartitions?: number;
  readonly clientId?: string;
  readonly logger?: Logger;
  /** Milliseconds a fetch waits for data when caught up; also bounds how fast stop() returns. */
  readonly maxWaitTimeMs?: number;
  /**
   * Consumer session timeout (default 10 s): how long a crashed member holds its partitions
   * before the group hands them to a live one. Handlers heartbeat while they wait.
   */
  readonly sessionTimeoutMs?: number;
  /**
   * Put before every topic and consumer-group name on the broker (KAFKA_TOPIC_PREFIX), so that
   * deployments can share one cluster. Handlers and callers still see the plain names.
   */
  readonly topicPrefix?: string;
  /**
   * Appended to every topic name on the broker (`guestpass.pass-events` + suffix), so that
   * several environments or test runs can share one cluster. Handlers still see the plain names.
   */
  readonly topicSuffix?: string;
}

export class KafkaPassBus implements PassBus {
  readonly kind = 'kafka' as const;
  private readonly kafka: KafkaClient;
  private producer: Promise<Producer> | null = null;
  /** The admin connection readiness probes use (checkConnection), kept between probes. */
  private probe: Promise<Admin> | null = null;
  private readonly consumers = new Set<KafkaMember>();
  private closed = false;

  constructor(private readonly options: KafkaPassBusOptions) {
    if (options.brokers.length === 0) throw new Error('KafkaPassBus needs at least one broker');
    const logger = options.logger?.child({ component: 'kafkajs' });
    this.kafka = new Kafka({
      clientId: options.clientId ?? 'guestpass',
      brokers: [...options.brokers],
      connectionTimeout: 3000,
      socketFactory,
      requestTimeout: 30_000,
      retry: { initialRetryTime: 200, maxRetryTime: 5000, retries: 8 },
      logLevel: logLevel.WARN,
      logCreator: () => (entry: LogEntry) => logKafka(logger, entry),
    });
  }

  /** The topic's name on the broker. */
  physical(topic: string): string {
    return (this.options.topicPrefix ?? '') + topic + (this.options.topicSuffix ?? '');
  }

  /** The consumer group's name on the broker. */
  physicalGroup(groupId: string): string {
    return (this.options.topicPrefix ?? '') + groupId;
  }

  async ensureTopics(): Promise<void> {
    // Right after a topic is created (here or by another process) its metadata can briefly
    // answer UNKNOWN_TOPIC_OR_PARTITION: retry the whole step a few times before giving up.
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.ensureTopicsOnce();
      } catch (error) {
        if (attempt >= 10 || (error as { retriable?: boolean }).retriable === false) throw error;
        await sleep(100 * attempt);
      }
    }
  }

  private async ensureTopicsOnce(): Promise<void> {
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      const wanted = [
        { topic: this.physical(PASS_EVENTS_TOPIC), numPartitions: this.options.passTopicPartitions },
        { topic: this.physical(DOOR_EVENTS_TOPIC), numPartitions: this.options.doorTopicPartitions ?? this.options.passTopicPartitions },
      ];
      const existing = new Set(await admin.listTopics());
      const missing = wanted.filter((t) => !existing.has(t.topic));
      if (missing.length > 0) {
        try {
          await admin.createTopics({ topics: missing, waitForLeaders: true });
        } catch (error) {
          // Another process created it between list and create: fine.
          if (!/already exists/i.test(String((error as Error).message))) throw error;
        }
      }
      await this.warnOnPartitionMismatch(admin, wanted);
    } finally {
      await admin.disconnect();
    }
  }

  /** Deletes this bus's topics (test clean-up; never called by the services). */
  async deleteTopics(): Promise<void> {
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      await admin.deleteTopics({ topics: [this.physical(PASS_EVENTS_TOPIC), this.physical(DOOR_EVENTS_TOPIC)], timeout: 10_000 });
    } finally {
      await admin.disconnect();
    }
  }

  async publish(topic: string, messages: readonly BusMessage[]): Promise<void> {
    if (this.closed) throw new BusClosedError();
    if (messages.length === 0) return;
    const producer = await this.connectedProducer();
    try {
      await producer.send({
        topic: this.physical(topic),
        acks: -1,
        messages: messages.map((m) => ({
          key: m.key,
          value: m.value,
          headers: { [HEADERS.id]: m.id, [HEADERS.type]: m.type, [HEADERS.contentType]: 'application/json' },
        })),
      });
    } catch (error) {
      // A producer whose retries ran out may hold a broken idempotence state (after a broker
      // restart, for one): start afresh on the next publish. The caller retries the batch.
      if (this.producer) {
        const broken = this.producer;
        this.producer = null;
        void broken.then((p) => p.disconnect()).catch(() => undefined);
      }
      throw error;
    }
  }

  async consume(options: ConsumeOptions): Promise<BusConsumer> {
    if (this.closed) throw new BusClosedError();
    const member = new KafkaMember(
      ({ groupId }) =>
        this.kafka.consumer({
          groupId: this.physicalGroup(groupId),
          sessionTimeout: this.options.sessionTimeoutMs ?? 10_000,
          rebalanceTimeout: 30_000,
          heartbeatInterval: 1000,
          maxWaitTimeInMs: this.options.maxWaitTimeMs ?? 500,
          allowAutoTopicCreation: false,
          retry: { initialRetryTime: 250, maxRetryTime: 5000, retries: 10, restartOnFailure: async () => !this.closed },
        }),
      options,
      this.physical(options.topic),
      this.options.logger,
      () => this.consumers.delete(member),
    );
    this.consumers.add(member);
    try {
      await member.start();
    } catch (error) {
      this.consumers.delete(member);
      throw error;
    }
    return member;
  }

  /** Resolves once a broker answered a metadata request: for /readyz. */
  async checkConnection(): Promise<void> {
    if (this.closed) throw new BusClosedError();
    if (!this.probe) {
      const admin = this.kafka.admin({ retry: { retries: 0 } });
      const connecting = admin.connect().then(() => admin);
      this.probe = connecting;
      connecting.catch(() => {
        if (this.probe === connecting) this.probe = null;
      });
    }
    const probe = this.probe;
    const admin = await probe;
    try {
      await admin.describeCluster();
    } catch (error) {
      // Connect afresh on the next probe.
      if (this.probe === probe) this.probe = null;
      void admin.disconnect().catch(() => undefined);
      throw error;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const probe = this.probe;
    this.probe = null;
    if (probe) await probe.then((admin) => admin.disconnect()).catch(() => undefined);
    await Promise.all([...this.consumers].map((c) => c.stop()));
    const producer = this.producer;
    this.producer = null;
    if (producer) await producer.then((p) => p.disconnect()).catch(() => undefined);
  }

  private connectedProducer(): Promise<Producer> {
    if (!this.producer) {
      const producer = this.kafka.producer({
        idempotent: true,
        // kafkajs keeps ordering with idempotence only with one request in flight per broker.
        maxInFlightRequests: 1,
        allowAutoTopicCreation: false,
        createPartitioner: Partitioners.DefaultPartitioner,
      });
      const connecting = producer.connect().then(() => producer);
      connecting.catch(() => {
        if (this.producer === connecting) this.producer = null;
      });
      this.producer = connecting;
    }
    return this.producer;
  }

  private async warnOnPartitionMismatch(admin: Admin, wanted: ReadonlyArray<{ topic: string; numPartitions: number }>) {
    const { topics } = await admin.fetchTopicMetadata({ topics: wanted.map((t) => t.topic) });
    for (const t of topics) {
      const want = wanted.find((w) => w.topic === t.name)?.numPartitions ?? 0;
      // Never add partitions here: it would move keys to other partitions and break per-pass order
      // for events still in flight. An operator does it deliberately, with the consumers drained.
      if (t.partitions.length !== want) {
        this.options.logger?.warn(
          { topic: t.name, partitions: t.partitions.length, configured: want },
          'topic exists with another partition count than configured; leaving it unchanged',
        );
      }
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

function logKafka(logger: Logger | undefined, entry: LogEntry): void {
  if (!logger) return;
  const { message, ...extra } = entry.log;
  const fields = { ...extra, namespace: entry.namespace };
  switch (entry.level) {
    case logLevel.ERROR:
      logger.error(fields, message);
      break;
    case logLevel.WARN:
      logger.warn(fields, message);
      break;
    case logLevel.INFO:
      logger.info(fields, message);
      break;
    default:
      logger.debug(fields, message);
  }
}
