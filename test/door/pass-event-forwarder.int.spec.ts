// The forwarder against the real PostgreSQL event store: what it publishes, and that its
// checkpoint only moves once the bus acknowledged (at-least-once, never a gap).
import { expect } from 'chai';
import { migratedDatabase } from '../support/database.js';
import { type Knex } from '../../shared/db/knex.js';
import { createEventStore } from '../../shared/event-store/create-event-store.js';
import type { EventStore } from '../../shared/event-store/event-store.js';
import { InProcessPassBus } from '../../shared/pass-bus/in-process-pass-bus.js';
import { PASS_EVENTS_TOPIC, type BusMessage, type DeliveredMessage, type PassBus } from '../../shared/pass-bus/pass-bus.js';
import { parsePassEventMessage } from '../../shared/pass-bus/pass-event-message.js';
import { PassEventForwarder } from '../../projections/pass-event-forwarder.js';
import { eventSchemas } from '../../shared/domain/event-schemas.js';
import { testLogger } from './support/door-components.js';
import { eventually, newEvent, passCreated, passRevoked, sleep, testPass } from './fixtures.js';

/** An in-process bus whose publish can be made to fail, to play a Kafka outage. */
class FlakyBus extends InProcessPassBus {
  failing = false;
  attempts = 0;
  override async publish(topic: string, messages: readonly BusMessage[]): Promise<void> {
    this.attempts++;
    if (this.failing) throw new Error('broker unavailable');
    return super.publish(topic, messages);
  }
}

describe('pass event forwarder (PostgreSQL event store)', function () {
  this.timeout(30_000);
  let knex: Knex;
  let store: EventStore;

  before(async () => {
    const migrated = await migratedDatabase('door_forwarder');
    const url = migrated.url;
    knex = migrated.knex;
    store = createEventStore({ databaseUrl: url, eventStoreUrl: null, schemas: eventSchemas });
  });

  after(async () => {
    await store?.close();
    await knex?.destroy();
  });

  async function collect(bus: PassBus, groupId: string): Promise<{ received: DeliveredMessage[]; stop(): Promise<void> }> {
    const received: DeliveredMessage[] = [];
    const consumer = await bus.consume({ topic: PASS_EVENTS_TOPIC, groupId, onMessages: async (m) => void received.push(...m) });
    return { received, stop: () => consumer.stop() };
  }

  it('publishes pass events only, keyed by pass id, in order, and moves its checkpoint to the head', async () => {
    const bus = new InProcessPassBus();
    const sink = await collect(bus, 'sink');
    const name = 'fw-order';
    const p = testPass(3);
    const q = testPass(3);
    await store.appendToStream('guest-invites-7-a', [newEvent(passCreated(p)), newEvent(passCreated(q))], 'no_stream');
    await store.appendToStream('facility-3', [newEvent({ type: 'FacilitySuspended', data: { facilityId: 3, orgId: 1 } })], 'any');
    await store.appendToStream('guest-invites-7-a', [newEvent(passRevoked(p))], 1);
    const forwarder = new PassEventForwarder({ store, knex, bus, logger: testLogger, name });
    await forwarder.start();
    await eventually(() => expect(sink.received).to.have.length(3));
    await eventually(async () => expect((await forwarder.status()).caughtUp).to.equal(true));
    expect(sink.received.map((m) => [m.type, m.key])).to.deep.equal([
      ['PassCreated', String(p.passId)],
      ['PassCreated', String(q.passId)],
      ['PassRevoked', String(p.passId)],
    ]);
    const revoke = parsePassEventMessage(sink.received[2]!);
    expect(revoke).to.include({ type: 'PassRevoked', stream_name: 'guest-invites-7-a', revision: 2 });
    expect((await forwarder.status()).eventsForwarded).to.equal(3);
    await forwarder.stop();
    await sink.stop();
    await bus.close();
  });

  it('holds its checkpoint while the bus refuses, then delivers everything once it accepts', async () => {
    const bus = new FlakyBus();
    const sink = await collect(bus, 'sink');
    const name = 'fw-outage';
    // Start caught up with what the previous test wrote.
    const head = await store.headPosition();
    await knex('forwarder_checkpoints').insert({ name, commit_position: head.commit.toString(), prepare_position: head.prepare.toString() });
    const forwarder = new PassEventForwarder({ store, knex, bus, logger: testLogger, name, retry: { initialMs: 20, maxMs: 100 } });
    await forwarder.start();
    bus.failing = true;
    const passes = [testPass(4), testPass(4), testPass(4)];
    for (const p of passes) await store.appendToStream(`guest-invites-8-${p.passId}`, [newEvent(passCreated(p))], 'no_stream');
    await eventually(() => expect(bus.attempts).to.be.at.least(3));
    const held = await knex('forwarder_checkpoints').where({ name }).first();
    expect([held.commit_position, held.prepare_position]).to.deep.equal([head.commit.toString(), head.prepare.toString()]);
    expect(sink.received).to.have.length(0);
    bus.failing = false;
    await eventually(() => expect(sink.received.map((m) => m.key)).to.deep.equal(passes.map((p) => String(p.passId))));
    await eventually(async () => expect((await forwarder.status()).caughtUp).to.equal(true));
    await forwarder.stop();

    // A restarted forwarder resumes after its checkpoint: nothing acknowledged is sent again.
    const again = new PassEventForwarder({ store, knex, bus, logger: testLogger, name });
    await again.start();
    const late = testPass(4);
    await store.appendToStream(`guest-invites-8-${late.passId}`, [newEvent(passCreated(late))], 'no_stream');
    await eventually(() => expect(sink.received).to.have.length(4));
    await sleep(300);
    expect(sink.received.map((m) => m.key)).to.deep.equal([...passes, late].map((p) => String(p.passId)));
    await again.stop();
    await sink.stop();
    await bus.close();
  });

  it('stops promptly even while the bus is down', async () => {
    const bus = new FlakyBus();
    bus.failing = true;
    const forwarder = new PassEventForwarder({ store, knex, bus, logger: testLogger, name: 'fw-stop', retry: { initialMs: 1000, maxMs: 5000 } });
    await forwarder.start();
    await eventually(() => expect(bus.attempts).to.be.at.least(1));
    const started = Date.now();
    await forwarder.stop();
    expect(Date.now() - started).to.be.below(1000);
    const row = await knex('forwarder_checkpoints').where({ name: 'fw-stop' }).first();
    expect(row).to.equal(undefined);
    await bus.close();
  });
});
