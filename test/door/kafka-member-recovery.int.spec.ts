// A consumer of the Kafka pass bus keeps consuming after kafkajs gives up on it. A connection
// that breaks while the member looks up its group coordinator (FindCoordinator in flight as the
// broker stops or starts) made kafkajs crash the consumer with KafkaJSGroupCoordinatorNotFound and
// `restart: false`: it never consumed again (issue 27: revoked passes kept opening doors after a
// Kafka restart). The fault is made real: a private broker behind a proxy that cuts that request.
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { KafkaPassBus } from '../../shared/pass-bus/kafka-pass-bus.js';
import { PASS_EVENTS_TOPIC, type BusConsumer } from '../../shared/pass-bus/pass-bus.js';
import { requireComponent } from '../support/components.js';
import { freePort } from './support/broker-processes.js';
import { API_KEYS, KafkaFaultProxy } from './support/kafka-fault-proxy.js';
import { javaBinary, kafkaLibDir, PrivateKafka } from '../support/private-kafka.js';
import { testLogger } from './support/door-components.js';

/** Resolves once `check` holds; fails with `what` after `timeoutMs`. */
async function waitFor(what: string, check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('Kafka pass bus: a consumer kafkajs gives up on is replaced', function () {
  this.timeout(240_000);
  let kafka: PrivateKafka | null = null;
  let proxy: KafkaFaultProxy;
  let bus: KafkaPassBus;
  const consumers: BusConsumer[] = [];

  before(async function () {
    requireComponent(this, 'a private Kafka broker', Boolean(javaBinary() && kafkaLibDir()), 'java and .ci/kafka/lib; .ci/kafka/start.sh fetches the jars');
    const proxyPort = await freePort();
    proxy = await KafkaFaultProxy.start(proxyPort, () => kafka!.port);
    kafka = await PrivateKafka.start({ advertisedPort: proxyPort });
    bus = new KafkaPassBus({
      brokers: [`127.0.0.1:${proxy.port}`],
      passTopicPartitions: 2,
      clientId: 'member-recovery-test',
      logger: testLogger,
      maxWaitTimeMs: 100,
      sessionTimeoutMs: 6000,
    });
    await bus.ensureTopics();
  });

  after(async () => {
    await Promise.all(consumers.map((c) => c.stop()));
    await bus?.close();
    await proxy?.stop();
    await kafka?.destroy();
  });

  async function consumeInto(seen: Set<string>, groupId: string): Promise<void> {
    consumers.push(
      await bus.consume({
        topic: PASS_EVENTS_TOPIC,
        groupId,
        onMessages: async (messages) => {
          for (const m of messages) seen.add(m.id);
        },
      }),
    );
  }

  async function publishOne(): Promise<string> {
    const id = randomUUID();
    await bus.publish(PASS_EVENTS_TOPIC, [{ key: id, id, type: 'PassRevoked', value: '{}' }]);
    return id;
  }

  it('its coordinator lookup cut on the first join: the member still consumes', async () => {
    const seen = new Set<string>();
    const before = proxy.seen.get(API_KEYS.FindCoordinator) ?? 0;
    proxy.cutAt(API_KEYS.FindCoordinator);
    await consumeInto(seen, `recovery-${randomUUID().slice(0, 8)}`);
    expect(proxy.pendingCuts(API_KEYS.FindCoordinator), 'the cut happened').to.equal(0);
    expect(proxy.seen.get(API_KEYS.FindCoordinator)).to.be.greaterThan(before);
    const id = await publishOne();
    await waitFor('the message published after the cut is consumed', () => seen.has(id), 60_000);
  });

  it('its coordinator lookup cut when it rejoins for a rebalance: the member consumes again', async () => {
    const groupId = `recovery-${randomUUID().slice(0, 8)}`;
    const first = new Set<string>();
    await consumeInto(first, groupId);
    const warmUp = await publishOne();
    await waitFor('the first member consumes', () => first.has(warmUp), 60_000);
    // A second member's join makes the first rejoin (REBALANCE_IN_PROGRESS on its heartbeat), and
    // a rejoin starts with a coordinator lookup: cut the first lookup after the newcomer's own.
    const second = new Set<string>();
    const lookups = proxy.seen.get(API_KEYS.FindCoordinator) ?? 0;
    const joining = consumeInto(second, groupId);
    await waitFor('the newcomer looks up the coordinator', () => (proxy.seen.get(API_KEYS.FindCoordinator) ?? 0) > lookups, 30_000);
    proxy.cutAt(API_KEYS.FindCoordinator);
    await joining;
    await waitFor('the first member meets the cut as it rejoins', () => proxy.pendingCuts(API_KEYS.FindCoordinator) === 0, 60_000);
    // Once the group has settled each member holds one of the two partitions: keep publishing
    // until both have consumed something published after the cut (only if the first came back).
    const ids: string[] = [];
    const deadline = Date.now() + 60_000;
    while (!(ids.some((id) => first.has(id)) && ids.some((id) => second.has(id)))) {
      if (Date.now() > deadline) throw new Error(`not within 60000 ms: both members consume again (first: ${ids.filter((id) => first.has(id)).length}, second: ${ids.filter((id) => second.has(id)).length} of ${ids.length})`);
      ids.push(...(await Promise.all(Array.from({ length: 4 }, () => publishOne()))));
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  });
});
