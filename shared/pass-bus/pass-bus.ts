// The pass event bus port: the log between the event store and the door path.
//
// Producers publish messages keyed by pass id (one key's messages stay in order) with the event id
// as the message id; consumers read in a consumer group and commit a batch only after their
// handler resolved, so delivery is at-least-once and every consumer dedupes (by event id or by
// a per-key version). Adapters: Kafka (kafkajs) in production and CI, in-process for the embedded
// default. Both pass the contract suite in test/door/pass-bus.int.spec.ts.

/** Pass lifecycle events (PassCreated, PassRevoked, ...) from the forwarder to the door-gateway. */
export const PASS_EVENTS_TOPIC = 'guestpass.pass-events';
/** Access events (granted/denied scans) from the door-gateway to the command-side reactor. */
export const DOOR_EVENTS_TOPIC = 'guestpass.door-events';

/** Header names carried by every message (Kafka record headers). */
export const HEADERS = {
  id: 'event-id',
  type: 'event-type',
  contentType: 'content-type',
} as const;

export interface BusMessage {
  /** Partitioning key: messages with the same key are delivered in publish order. */
  readonly key: string;
  /** Unique id of the message (the event id); consumers dedupe by it. */
  readonly id: string;
  /** Event type, so consumers can skip what they do not handle without parsing the value. */
  readonly type: string;
  /** UTF-8 JSON. */
  readonly value: string;
}

export interface DeliveredMessage extends BusMessage {
  readonly topic: string;
  readonly partition: number;
  /** Decimal string (Kafka offsets are 64-bit). */
  readonly offset: string;
  /** Milliseconds since the epoch when the bus accepted the message. */
  readonly timestamp: number;
}

export interface BatchControl {
  /** Keeps the group membership alive while a handler waits (for a broker acknowledgement, say). */
  heartbeat(): Promise<void>;
  /** False once the consumer is stopping or the partition moved to another member: stop early. */
  isActive(): boolean;
}

export interface ConsumeOptions {
  readonly topic: string;
  readonly groupId: string;
  /**
   * Handles messages of one partition in order. Their offsets are committed only after it
   * resolves; when it throws, the same messages are delivered again (after a back-off).
   */
  readonly onMessages: (messages: readonly DeliveredMessage[], control: BatchControl) => Promise<void>;
  /** Upper bound on messages per handler call (default 500). */
  readonly maxBatchSize?: number;
  /** Partitions handled at the same time by this member (default 1; each stays in order). */
  readonly concurrency?: number;
  readonly onError?: (error: unknown) => void;
}

export interface BusConsumer {
  /** Resolves once no handler runs and none will be called again. */
  stop(): Promise<void>;
}

export interface PassBus {
  /** Which adapter this is, for logs and status output. */
  readonly kind: 'kafka' | 'in-process';
  /** Creates the topics that do not exist yet (partition count from configuration). */
  ensureTopics(): Promise<void>;
  /** Resolves once the bus has durably accepted every message (Kafka: acks from all in-sync replicas). */
  publish(topic: string, messages: readonly BusMessage[]): Promise<void>;
  /** Joins the consumer group and starts handling; resolves once the member is running. */
  consume(options: ConsumeOptions): Promise<BusConsumer>;
  close(): Promise<void>;
}

export class BusClosedError extends Error {
  override readonly name = 'BusClosedError';
  constructor() {
    super('the pass bus is closed');
  }
}
