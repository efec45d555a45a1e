// The in-process pass bus: the embedded default (no KAFKA_BROKERS). One ordered log per topic
// (a single partition keeps every key in order), consumer groups with committed offsets, the
// same at-least-once contract as Kafka.
//
// Nothing here survives the process. So that the forwarder's checkpoint never runs ahead of what
// the door-gateway has applied (both are stored in PostgreSQL), `publish` by default resolves only
// once every consumer group of the topic has committed the messages: the hand-off is synchronous,
// and a crash anywhere simply makes the forwarder publish the same events again, which the
// consumers dedupe.
import {
  BusClosedError,
  DOOR_EVENTS_TOPIC,
  PASS_EVENTS_TOPIC,
  type BusConsumer,
  type BusMessage,
  type ConsumeOptions,
  type DeliveredMessage,
  type PassBus,
} from './pass-bus.js';

export interface InProcessPassBusOptions {
  /** Resolve `publish` only after every consumer group of the topic committed it (default true). */
  readonly awaitConsumers?: boolean;
  /** Messages kept for groups that join later, when no group has joined yet (default 100,000). */
  readonly retainLimit?: number;
  /** Back-off after a failing handler; doubles up to 5 s (default 100 ms). */
  readonly retryDelayMs?: number;
}

interface Waiter {
  readonly end: number;
  readonly groups: readonly Group[];
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

interface Group {
  readonly id: string;
  /** Next offset to hand out (everything before it is committed). */
  committed: number;
  member: Member | null;
}

class TopicLog {
  /** Offset of messages[0]. */
  base = 0;
  readonly messages: DeliveredMessage[] = [];
  readonly groups = new Map<string, Group>();
  waiters: Waiter[] = [];

  constructor(readonly name: string) {}

  get next(): number {
    return this.base + this.messages.length;
  }
}

export class InProcessPassBus implements PassBus {
  readonly kind = 'in-process' as const;
  private readonly topics = new Map<string, TopicLog>();
  private readonly awaitConsumers: boolean;
  private readonly retainLimit: number;
  private readonly retryDelayMs: number;
  private closed = false;

  constructor(options: InProcessPassBusOptions = {}) {
    this.awaitConsumers = options.awaitConsumers ?? true;
    this.retainLimit = options.retainLimit ?? 100_000;
    this.retryDelayMs = options.retryDelayMs ?? 100;
  }

  async ensureTopics(): Promise<void> {
    this.topic(PASS_EVENTS_TOPIC);
    this.topic(DOOR_EVENTS_TOPIC);
  }

  async publish(topicName: string, messages: readonly BusMessage[]): Promise<void> {
    if (this.closed) throw new BusClosedError();
    if (messages.length === 0) return;
    const topic = this.topic(topicName);
    const now = Date.now();
    for (const m of messages) {
      topic.messages.push({
        key: m.key,
        id: m.id,
        type: m.type,
        value: m.value,
        topic: topicName,
        partition: 0,
        offset: String(topic.next),
        timestamp: now,
      });
    }
    const end = topic.next;
    const groups = [...topic.groups.values()];
    for (const g of groups) g.member?.wake();
    this.trim(topic);
    if (!this.awaitConsumers || groups.length === 0) return;
    await new Promise<void>((resolve, reject) => {
      topic.waiters.push({ end, groups, resolve, reject });
      this.settle(topic);
    });
  }

  async consume(options: ConsumeOptions): Promise<BusConsumer> {
    if (this.closed) throw new BusClosedError();
    const topic = this.topic(options.topic);
    let group = topic.groups.get(options.groupId);
    if (!group) {
      // A new group starts from the oldest message still held, like auto.offset.reset=earliest.
      group = { id: options.groupId, committed: topic.base, member: null };
      topic.groups.set(group.id, group);
    }
    if (group.member) throw new Error(`consumer group ${options.groupId} already has a member on ${options.topic}`);
    const member = new Member(topic, group, options, this.retryDelayMs, () => {
      this.settle(topic);
      this.trim(topic);
    });
    group.member = member;
    member.start();
    return member;
  }

  /** Committed offset (next to read) of a group, for tests and status output. */
  committedOffset(topicName: string, groupId: string): number | null {
    return this.topics.get(topicName)?.groups.get(groupId)?.committed ?? null;
  }

  /** Messages held for a topic (for tests). */
  endOffset(topicName: string): number {
    return this.topics.get(topicName)?.next ?? 0;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const topic of this.topics.values()) {
      await Promise.all([...topic.groups.values()].map((g) => g.member?.stop()));
      for (const w of topic.waiters) w.reject(new BusClosedError());
      topic.waiters = [];
    }
  }

  private topic(name: string): TopicLog {
    let topic = this.topics.get(name);
    if (!topic) {
      topic = new TopicLog(name);
      this.topics.set(name, topic);
    }
    return topic;
  }

  private settle(topic: TopicLog): void {
    topic.waiters = topic.waiters.filter((w) => {
      if (w.groups.every((g) => g.committed >= w.end)) {
        w.resolve();
        return false;
      }
      return true;
    });
  }

  /** Drops messages every group has committed; with no group yet, keeps the newest `retainLimit`. */
  private trim(topic: TopicLog): void {
    const groups = [...topic.groups.values()];
    const keepFrom = groups.length > 0 ? Math.min(...groups.map((g) => g.committed)) : topic.next - this.retainLimit;
    const drop = Math.min(Math.max(0, keepFrom - topic.base), topic.messages.length);
    if (drop > 0) {
      topic.messages.splice(0, drop);
      topic.base += drop;
    }
  }
}

class Member implements BusConsumer {
  private running = false;
  private signal: (() => void) | null = null;
  private loop: Promise<void> = Promise.resolve();

  constructor(
    private readonly topic: TopicLog,
    private readonly group: Group,
    private readonly options: ConsumeOptions,
    private readonly retryDelayMs: number,
    private readonly onCommit: () => void,
  ) {}

  start(): void {
    this.running = true;
    this.loop = this.run();
  }

  wake(): void {
    this.signal?.();
  }

  async stop(): Promise<void> {
    if (!this.running) return this.loop;
    this.running = false;
    this.wake();
    await this.loop;
    if (this.group.member === this) this.group.member = null;
  }

  private async run(): Promise<void> {
    const maxBatch = this.options.maxBatchSize ?? 500;
    let failures = 0;
    const control = { heartbeat: async () => undefined, isActive: () => this.running };
    while (this.running) {
      // Messages below base were trimmed only after every group committed them: never skipped.
      const from = Math.max(this.group.committed, this.topic.base);
      if (from >= this.topic.next) {
        await new Promise<void>((resolve) => {
          this.signal = () => {
            this.signal = null;
            resolve();
          };
        });
        continue;
      }
      const start = from - this.topic.base;
      const batch = this.topic.messages.slice(start, start + maxBatch);
      try {
        await this.options.onMessages(batch, control);
        failures = 0;
      } catch (error) {
        this.options.onError?.(error);
        failures++;
        await this.sleep(Math.min(5000, this.retryDelayMs * 2 ** (failures - 1)));
        continue;
      }
      // A handler that returned after stop() was asked still completed: commit its work.
      this.group.committed = from + batch.length;
      this.onCommit();
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done() {
        clearTimeout(timer);
        self.signal = null;
        resolve();
      }
      // stop() interrupts the back-off; a new message does too, which only retries sooner.
      this.signal = done;
    });
  }
}
