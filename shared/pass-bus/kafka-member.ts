// One consumer-group member of the Kafka pass bus: manual commits after the handler resolved, a
// failing handler retried in place, and a consumer that kafkajs gave up on replaced by a new one.
//
// Why the replacement: kafkajs (2.2.4) restarts a crashed consumer only when the crash's root
// error is retriable. A connection that breaks while the member looks up its group coordinator
// (a FindCoordinator request in flight as the broker stops or starts) surfaces as
// KafkaJSGroupCoordinatorNotFound, which is not: the consumer emits CRASH with `restart: false`,
// leaves the group and never comes back, while the process, its producer and its readiness stay
// fine. On the door path that froze the doors' allow-lists: revoked passes kept opening doors
// (issue 27; test/door/kafka-member-recovery.int.spec.ts cuts that request to show it).
import { type Consumer, type ConsumerConfig, type EachBatchPayload, type KafkaMessage } from 'kafkajs';
import type { Logger } from '../logger.js';
import { HEADERS, type BusConsumer, type ConsumeOptions, type DeliveredMessage } from './pass-bus.js';

/** Pause before a replacement consumer starts: doubles per failed start, at most this. */
const MAX_REPLACE_DELAY_MS = 5000;

export class KafkaMember implements BusConsumer {
  private stopping = false;
  private stopped: Promise<void> | null = null;
  private consumer: Consumer | null = null;
  /** A replacement under way (or null): stop() waits for it. */
  private replacing: Promise<void> | null = null;
  /** Crashes kafkajs did not recover from since the member last joined its group. */
  private unrecovered = 0;
  private readonly wake = new AbortController();
  /** How many times a consumer kafkajs gave up on was replaced. */
  replacements = 0;

  constructor(
    private readonly newConsumer: (config: Pick<ConsumerConfig, 'groupId'>) => Consumer,
    private readonly options: ConsumeOptions,
    private readonly physicalTopic: string,
    private readonly logger: Logger | undefined,
    private readonly onStopped: () => void,
  ) {}

  /** Joins and starts handling; rejects when the first consumer cannot connect or subscribe. */
  async start(): Promise<void> {
    await this.startConsumer();
  }

  private async startConsumer(): Promise<void> {
    const consumer = this.newConsumer({ groupId: this.options.groupId });
    this.consumer = consumer;
    const { CRASH, GROUP_JOIN } = consumer.events;
    consumer.on(GROUP_JOIN, () => {
      this.unrecovered = 0;
    });
    consumer.on(CRASH, (event) => {
      const { error, restart } = event.payload;
      this.options.onError?.(error);
      if (restart || this.stopping || this.consumer !== consumer) {
        this.logger?.warn({ err: error, groupId: this.options.groupId, restart }, 'kafka consumer crashed; kafkajs restarts it');
        return;
      }
      this.logger?.error({ err: error, groupId: this.options.groupId }, 'kafka consumer crashed and kafkajs gave up on it; starting a new one');
      this.replace(consumer);
    });
    try {
      await consumer.connect();
      await consumer.subscribe({ topic: this.physicalTopic, fromBeginning: true });
      await consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: this.options.concurrency ?? 1,
        eachBatch: (payload) => this.eachBatch(consumer, payload),
      });
    } catch (error) {
      if (this.consumer === consumer) this.consumer = null;
      await consumer.disconnect().catch(() => undefined);
      throw error;
    }
  }

  /** Drops a consumer kafkajs will not restart and starts a new one, with back-off, until one runs or the member stops. */
  private replace(dead: Consumer): void {
    if (this.replacing) return;
    this.consumer = null;
    this.replacing = (async () => {
      await dead.disconnect().catch(() => undefined);
      while (!this.stopping) {
        this.unrecovered++;
        await pause(Math.min(MAX_REPLACE_DELAY_MS, 250 * 2 ** (this.unrecovered - 1)), this.wake.signal);
        if (this.stopping) return;
        try {
          await this.startConsumer();
          this.replacements++;
          return;
        } catch (error) {
          this.options.onError?.(error);
          this.logger?.warn({ err: error, groupId: this.options.groupId }, 'new kafka consumer did not start; trying again');
        }
      }
    })().finally(() => {
      this.replacing = null;
    });
  }

  stop(): Promise<void> {
    this.stopping = true;
    this.wake.abort();
    this.stopped ??= (async () => {
      await this.replacing;
      await this.consumer?.disconnect().catch((error) => this.logger?.warn({ err: error }, 'kafka consumer disconnect failed'));
    })().finally(this.onStopped);
    return this.stopped;
  }

  private async eachBatch(consumer: Consumer, { batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload): Promise<void> {
    const max = this.options.maxBatchSize ?? 500;
    const active = () => !this.stopping && this.consumer === consumer && isRunning() && !isStale();
    const control = { heartbeat, isActive: active };
    for (let i = 0; i < batch.messages.length && active(); i += max) {
      const chunk = batch.messages.slice(i, i + max).map((m) => toDelivered(this.options.topic, batch.partition, m));
      if (!(await this.handleWithRetry(chunk, control))) return; // partition gone: the next owner redelivers
      const last = chunk.at(-1)!.offset;
      resolveOffset(last);
      await consumer.commitOffsets([{ topic: batch.topic, partition: batch.partition, offset: (BigInt(last) + 1n).toString() }]);
      await heartbeat();
    }
  }

  /** True once the handler succeeded; false when the member lost the partition or is stopping. */
  private async handleWithRetry(chunk: DeliveredMessage[], control: { heartbeat(): Promise<void>; isActive(): boolean }) {
    for (let failures = 0; ; failures++) {
      if (failures > 0) {
        const delay = Math.min(5000, 100 * 2 ** (failures - 1));
        const until = Date.now() + delay;
        while (Date.now() < until && control.isActive()) {
          await pause(Math.min(250, until - Date.now()));
          await control.heartbeat().catch(() => undefined);
        }
      }
      if (!control.isActive()) return false;
      try {
        await this.options.onMessages(chunk, control);
        return true;
      } catch (error) {
        this.options.onError?.(error);
        this.logger?.warn(
          { err: error, topic: chunk[0]!.topic, partition: chunk[0]!.partition, offset: chunk[0]!.offset, failures: failures + 1 },
          'pass bus handler failed; retrying the batch',
        );
      }
    }
  }
}

function toDelivered(topic: string, partition: number, m: KafkaMessage): DeliveredMessage {
  return {
    topic,
    partition,
    offset: m.offset,
    timestamp: Number(m.timestamp),
    key: m.key?.toString('utf8') ?? '',
    id: header(m, HEADERS.id),
    type: header(m, HEADERS.type),
    value: m.value?.toString('utf8') ?? '',
  };
}

function header(m: KafkaMessage, name: string): string {
  const value = m.headers?.[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined ? '' : first.toString();
}

/** Resolves after `ms`, or at once when `signal` is aborted. */
function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, Math.max(0, ms));
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
