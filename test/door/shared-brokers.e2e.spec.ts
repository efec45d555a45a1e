// Two deployments on one Kafka cluster and one MQTT broker (issue 27): KAFKA_TOPIC_PREFIX keeps
// their topics and consumer groups apart, MQTT_TOPIC_ROOT their door topics. The same facility
// number and the same consumer-group name in both: a pass revoked in one never reaches the
// other's controllers, and one gateway's reconciliation of the broker's retained allow-list
// never clears the other's retained credentials.
import { expect } from 'chai';
import { randomBytes, randomUUID } from 'node:crypto';
import kafkajs from 'kafkajs';
import { connectLink, endLink, subscribe } from '../../door-gateway/mqtt-link.js';
import { doorTopics } from '../../door-gateway/contract.js';
import { PASS_EVENTS_TOPIC } from '../../shared/pass-bus/pass-bus.js';
import { inCI } from '../support/components.js';
import { DoorHarness, uniqueFacilityId } from './support/door-harness.js';
import { KAFKA_BROKERS, requireKafka } from './support/door-components.js';
import { mosquittoBinary, MosquittoInstance } from './support/broker-processes.js';
import { eventually, sleep, testPass } from './fixtures.js';

/** The retained, non-empty credential topics under `root` for `facility`, as a fresh subscriber sees them. */
async function retainedCredentials(url: string, root: string, facility: number): Promise<string[]> {
  const client = connectLink({ url, clientId: `probe-${randomUUID().slice(0, 8)}`, clean: true });
  const found = new Set<string>();
  client.on('message', (topic, payload, packet) => {
    if (packet.retain && payload.length > 0) found.add(topic);
  });
  await new Promise<void>((resolve) => client.once('connect', () => resolve()));
  await subscribe(client, [doorTopics(root).credentialsOf(facility)], 0);
  await sleep(300);
  await endLink(client);
  return [...found].sort();
}

describe('two deployments sharing one Kafka cluster and one MQTT broker', function () {
  this.timeout(120_000);
  let mosquitto: MosquittoInstance | null = null;
  const deployments: DoorHarness[] = [];
  const run = randomBytes(3).toString('hex');
  const roots = [`tenant-a-${run}/guestpass/v1`, `tenant-b-${run}/guestpass/v1`];
  const prefixes = [`tenant-a-${run}.`, `tenant-b-${run}.`];

  before(async function () {
    await requireKafka(this);
    const binary = mosquittoBinary();
    if (!binary) {
      if (inCI) throw new Error('mosquitto is not installed (.ci/mosquitto.sh installs it); CI requires it');
      console.warn('  skipping: no mosquitto binary');
      return this.skip();
    }
    mosquitto = await MosquittoInstance.start(binary);
    for (let i = 0; i < 2; i++) {
      deployments.push(
        await DoorHarness.start({
          kind: 'real',
          label: `door_shared_${i}`,
          mqttUrl: mosquitto.url,
          kafkaTopicPrefix: prefixes[i]!,
          mqttTopicRoot: roots[i]!,
          gatewayGroup: `guestpass-door-gateway-shared-${run}`, // the same name in both: only the prefix parts them
          reactor: false,
        }),
      );
    }
  });

  after(async () => {
    for (const d of deployments) await d.stop();
    await mosquitto?.stop();
  });

  it('keeps topics, groups, passes, revocations and retained messages apart', async () => {
    const [a, b] = deployments as [DoorHarness, DoorHarness];
    const facility = uniqueFacilityId(); // the same facility number in both deployments
    const [ca, cb] = [await a.controller(facility), await b.controller(facility)];
    const [pa, pa2, pb] = [testPass(facility), testPass(facility), testPass(facility)];
    await a.createPass(pa);
    await a.createPass(pa2);
    await b.createPass(pb);
    await eventually(() => {
      expect(ca.heldIds(), 'deployment A').to.deep.equal([pa.publicId, pa2.publicId].sort());
      expect(cb.heldIds(), 'deployment B').to.deep.equal([pb.publicId]);
    }, 30_000, 100);

    await a.revokePass(pa);
    await eventually(() => expect(ca.heldIds()).to.deep.equal([pa2.publicId]), 30_000, 100);
    expect(ca.scan({ qrValue: pa.qrValue })).to.include({ result: 'denied', reason: 'revoked' });
    expect(cb.heldIds(), 'B untouched by A').to.deep.equal([pb.publicId]);
    expect(cb.scan({ qrValue: pb.qrValue }).result).to.equal('granted');

    // A's gateway starts again: it reconciles the broker's retained list with its own records,
    // which know nothing of B's pass. B's retained credential must survive it.
    await a.gateway!.stop();
    const reconciliations = a.gateway!.stats.reconciliations;
    expect(reconciliations).to.be.greaterThan(0);
    await a.startGateway();
    await eventually(() => expect(a.gateway!.stats.reconciliations).to.be.greaterThan(0), 15_000, 100);
    expect(await retainedCredentials(mosquitto!.url, roots[1]!, facility)).to.deep.equal([doorTopics(roots[1]).credential(facility, pb.publicId)]);
    expect(await retainedCredentials(mosquitto!.url, roots[0]!, facility)).to.deep.equal([doorTopics(roots[0]).credential(facility, pa2.publicId)]);
    // A fresh controller of B gets B's list from the retained messages, nothing of A's.
    const fresh = await b.controller(facility);
    await eventually(() => expect(fresh.heldIds()).to.deep.equal([pb.publicId]), 15_000, 100);

    // On Kafka each deployment's topics and consumer group carry its prefix.
    const admin = new kafkajs.Kafka({ clientId: 'shared-brokers-test', brokers: KAFKA_BROKERS, logLevel: kafkajs.logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      const names = await admin.listTopics();
      const groups = (await admin.listGroups()).groups.map((g) => g.groupId);
      for (const [i, d] of deployments.entries()) {
        expect(names).to.include(prefixes[i] + PASS_EVENTS_TOPIC + d.topicSuffix);
        expect(groups).to.include(prefixes[i] + d.gatewayGroup);
      }
      expect(groups).not.to.include(a.gatewayGroup);
    } finally {
      await admin.disconnect();
    }
  });
});
