// The pass bus contract, run against the in-process adapter and against the real Kafka broker.
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { InProcessPassBus } from '../../shared/pass-bus/in-process-pass-bus.js';
import { KafkaPassBus } from '../../shared/pass-bus/kafka-pass-bus.js';
import { PASS_EVENTS_TOPIC, type BusMessage, type DeliveredMessage, type PassBus } from '../../shared/pass-bus/pass-bus.js';
import { kafkaTestBus, requireKafka } from './support/door-components.js';
import { eventually, sleep } from './fixtures.js';

function messages(keys: readonly string[], perKey: number): BusMessage[] {
  const out: BusMessage[] = [];
  for (let i = 0; i < perKey; i++) {
    for (const key of keys) out.push({ key, id: randomUUID(), type: 'PassCreated', value: JSON.stringify({ key, seq: i }) });
  }
  return out;
}

function contract(name: string, make: () => PassBus, before?: (ctx: Mocha.Context) => Promise<void>) {
  describe(`pass bus contract: ${name}`, function () {
    this.timeout(60_000);
    let bus: PassBus;

    beforeEach(async function () {
      if (before) await before(this);
      bus = make();
      await bus.ensureTopics();
    });

    afterEach(async () => {
      if (!bus) return;
      await bus.close();
      if (bus instanceof KafkaPassBus) await bus.deleteTopics().catch(() => undefined);
    });

    it('delivers every message with its key, id and type, in publish order per key', async () => {
      const sent = messages(['1', '2', '3', '4', '5'], 20);
      const groupId = `g-${randomUUID()}`;
      const received: DeliveredMessage[] = [];
      const consumer = await bus.consume({ topic: PASS_EVENTS_TOPIC, groupId, concurrency: 3, onMessages: async (batch) => void received.push(...batch) });
      await bus.publish(PASS_EVENTS_TOPIC, sent.slice(0, 50));
      await bus.publish(PASS_EVENTS_TOPIC, sent.slice(50));
      await eventually(() => expect(received).to.have.length(sent.length), 30_000);
      await consumer.stop();
      expect(new Set(received.map((m) => m.id))).to.deep.equal(new Set(sent.map((m) => m.id)));
      for (const key of ['1', '2', '3', '4', '5']) {
        const seqs = received.filter((m) => m.key === key).map((m) => JSON.parse(m.value).seq);
        expect(seqs).to.deep.equal([...seqs].sort((a, b) => a - b));
      }
      const one = received.find((m) => m.id === sent[0]!.id)!;
      expect(one).to.include({ topic: PASS_EVENTS_TOPIC, type: 'PassCreated', key: sent[0]!.key });
    });

    it('commits only after the handler resolved: a failing batch comes again, then never after success', async () => {
      const sent = messages(['7'], 5);
      const groupId = `g-${randomUUID()}`;
      let calls = 0;
      const seen: string[] = [];
      const consumer = await bus.consume({
        topic: PASS_EVENTS_TOPIC,
        groupId,
        onMessages: async (batch) => {
          calls++;
          if (calls === 1) throw new Error('the first attempt fails');
          seen.push(...batch.map((m) => m.id));
        },
      });
      await bus.publish(PASS_EVENTS_TOPIC, sent);
      await eventually(() => expect(seen).to.have.length(5), 30_000);
      expect(calls).to.be.greaterThan(1);
      await consumer.stop();
      // A new member of the group starts after the committed offset: nothing is delivered again.
      const again: string[] = [];
      const second = await bus.consume({ topic: PASS_EVENTS_TOPIC, groupId, onMessages: async (batch) => void again.push(...batch.map((m) => m.id)) });
      const marker = messages(['7'], 1);
      await bus.publish(PASS_EVENTS_TOPIC, marker);
      await eventually(() => expect(again).to.deep.equal([marker[0]!.id]), 30_000);
      await second.stop();
    });

    it('a member that stops before its handler finished leaves the messages to the next member', async () => {
      const sent = messages(['9'], 3);
      const groupId = `g-${randomUUID()}`;
      let entered!: () => void;
      const inHandler = new Promise<void>((resolve) => (entered = resolve));
      const first = await bus.consume({
        topic: PASS_EVENTS_TOPIC,
        groupId,
        onMessages: async (_batch, control) => {
          entered();
          while (control.isActive()) await sleep(20);
          throw new Error('stopped before finishing');
        },
      });
      const publishing = bus.publish(PASS_EVENTS_TOPIC, sent);
      await inHandler;
      await first.stop();
      const got: string[] = [];
      const second = await bus.consume({ topic: PASS_EVENTS_TOPIC, groupId, onMessages: async (batch) => void got.push(...batch.map((m) => m.id)) });
      await eventually(() => expect(got).to.deep.equal(sent.map((m) => m.id)), 30_000);
      await publishing;
      await second.stop();
    });

    it('separate groups each get every message', async () => {
      const sent = messages(['a', 'b'], 3);
      const a: string[] = [];
      const b: string[] = [];
      const ca = await bus.consume({ topic: PASS_EVENTS_TOPIC, groupId: `g-${randomUUID()}`, onMessages: async (batch) => void a.push(...batch.map((m) => m.id)) });
      const cb = await bus.consume({ topic: PASS_EVENTS_TOPIC, groupId: `g-${randomUUID()}`, onMessages: async (batch) => void b.push(...batch.map((m) => m.id)) });
      await bus.publish(PASS_EVENTS_TOPIC, sent);
      await eventually(() => {
        expect(a).to.have.length(6);
        expect(b).to.have.length(6);
      }, 30_000);
      await Promise.all([ca.stop(), cb.stop()]);
    });
  });
}

contract('in-process', () => new InProcessPassBus({ retryDelayMs: 10 }));
contract('Kafka (real broker)', () => kafkaTestBus(3), requireKafka);

describe('in-process bus hand-off', () => {
  it('publish resolves only once every consumer group has committed the messages', async () => {
    const bus = new InProcessPassBus();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const consumer = await bus.consume({ topic: PASS_EVENTS_TOPIC, groupId: 'gateway', onMessages: () => gate });
    let done = false;
    const publishing = bus.publish(PASS_EVENTS_TOPIC, messages(['1'], 2)).then(() => (done = true));
    await sleep(50);
    expect(done).to.equal(false);
    release();
    await publishing;
    expect(bus.committedOffset(PASS_EVENTS_TOPIC, 'gateway')).to.equal(2);
    await consumer.stop();
    await bus.close();
  });
});
