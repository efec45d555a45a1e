// The door path recovers by itself: crashes (SIGKILL) of the door-gateway and the forwarder
// mid-stream, a restart of Kafka, and restarts of the MQTT broker (Mosquitto and aedes) lose no
// event and apply none twice (by version), and the controllers end with exactly the right list.
import { expect } from 'chai';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Ack } from '../../door-gateway/contract.js';
import type { ControllerSimulator } from '../../door-gateway/controller-simulator.js';
import { startEmbeddedBroker, type EmbeddedBroker } from '../../door-gateway/embedded-broker.js';
import { inCI, requireComponent } from '../support/components.js';
import { DoorHarness, uniqueFacilityId } from './support/door-harness.js';
import { KAFKA_BROKERS, requireKafka, requireMosquitto } from './support/door-components.js';
import { startChild, type Child } from '../support/child-process.js';
import { freePort, mosquittoBinary, MosquittoInstance } from './support/broker-processes.js';
import { javaBinary, kafkaLibDir, PrivateKafka } from '../support/private-kafka.js';
import { eventually, sleep, testPass, type TestPass } from './fixtures.js';

const supportDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'support');

/** Counts applied acknowledgements per (controller, credential, version, op). */
function countApplied(controllers: readonly ControllerSimulator[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const c of controllers) {
    c.on('ack', (ack: Ack) => {
      if (ack.op === 'sync' || !ack.applied) return;
      const key = `${c.controllerId}/${ack.credential_id}/${ack.version}/${ack.op}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    });
  }
  return counts;
}

/** Writes passes (and revokes every third) until stopped or `max` passes, spread over a few streams. */
class Writer {
  readonly passes: Array<{ pass: TestPass; stream: string }> = [];
  readonly revoked = new Set<string>();
  private running = true;
  private readonly done: Promise<void>;

  constructor(
    private readonly h: DoorHarness,
    private readonly facility: number,
    private readonly pauseMs = 10,
    private readonly max = 400,
  ) {
    this.done = this.run();
  }

  private async run(): Promise<void> {
    for (let i = 0; this.running && i < this.max; i++) {
      const pass = testPass(this.facility);
      const stream = `guest-invites-${(i % 4) + 1}-${pass.validFrom.slice(0, 7)}`;
      await this.h.createPass(pass, stream);
      this.passes.push({ pass, stream });
      if (i % 3 === 2) {
        const victim = this.passes[i - 1]!;
        await this.h.revokePass(victim.pass, victim.stream);
        this.revoked.add(victim.pass.publicId);
      }
      await sleep(this.pauseMs);
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }

  expected(): string[] {
    return this.passes.map((p) => p.pass.publicId).filter((id) => !this.revoked.has(id)).sort();
  }
}

async function converged(controllers: readonly ControllerSimulator[], expected: readonly string[], timeoutMs = 60_000) {
  await eventually(() => {
    for (const c of controllers) expect(c.heldIds(), c.controllerId).to.deep.equal(expected);
  }, timeoutMs, 100);
}

describe('door path recovery: crashes of the door-gateway and the forwarder', function () {
  this.timeout(120_000);
  let h: DoorHarness;
  const children: Child[] = [];

  before(async function () {
    await requireKafka(this);
    await requireMosquitto(this);
    h = await DoorHarness.start({ kind: 'real', label: 'door_crash', forwarder: false, gateway: false, reactor: false });
  });

  after(async () => {
    await Promise.all(children.map((c) => c.kill()));
    await h?.stop();
  });

  it('SIGKILL mid-stream, twice: no event lost, none applied twice', async () => {
    const facility = uniqueFacilityId();
    const controllers = [await h.controller(facility), await h.controller(facility)];
    const applied = countApplied(controllers);
    const env = {
      DATABASE_URL: h.databaseUrl,
      KAFKA_BROKERS: KAFKA_BROKERS.join(','),
      MQTT_URL: h.mqttUrl,
      TOPIC_SUFFIX: h.topicSuffix,
      GATEWAY_CLIENT_ID: h.gatewayClientId,
      GATEWAY_GROUP: h.gatewayGroup,
    };
    const start = async (entry: string) => {
      const child = await startChild(path.join(supportDir, entry), { ...process.env, ...env });
      children.push(child);
      return child;
    };
    let gateway = await start('gateway-process.ts');
    let forwarder = await start('forwarder-process.ts');
    const writer = new Writer(h, facility);

    await sleep(1000);
    await gateway.kill();
    await sleep(300);
    await forwarder.kill();
    await sleep(700); // the stream goes on while both are down
    forwarder = await start('forwarder-process.ts');
    gateway = await start('gateway-process.ts');
    await sleep(1000);
    await gateway.kill();
    gateway = await start('gateway-process.ts');
    await sleep(500);
    await writer.stop();

    expect(writer.passes.length).to.be.greaterThan(50);
    await converged(controllers, writer.expected());
    for (const [key, n] of applied) expect(n, `${key} applied ${n} times`).to.equal(1);
    // The gateway's records hold every pass at its final version.
    const rows = await h.knex('door_credentials').where({ facility_id: facility });
    expect(rows).to.have.length(writer.passes.length);
    for (const row of rows) expect(row.state).to.equal(writer.revoked.has(row.credential_id) ? 'revoked' : 'active');
    await Promise.all([gateway.kill(), forwarder.kill()]);
  });
});

describe('door path recovery: Kafka restart', function () {
  this.timeout(300_000);
  let kafka: PrivateKafka | null = null;
  let h: DoorHarness;

  before(async function () {
    // A broker of the test's own: restarting the shared one would pull it from under every other user.
    requireComponent(this, 'a private Kafka broker', Boolean(javaBinary() && kafkaLibDir()), 'java and .ci/kafka/lib; .ci/kafka/start.sh fetches the jars');
    await requireMosquitto(this);
    kafka = await PrivateKafka.start();
    h = await DoorHarness.start({ kind: 'real', label: 'door_kafka_restart', kafkaBrokers: [kafka.broker] });
  });

  after(async () => {
    await h?.stop();
    await kafka?.destroy();
  });

  it('passes created and revoked while Kafka restarts reach the doors once it is back', async () => {
    const facility = uniqueFacilityId();
    const controllers = [await h.controller(facility)];
    const applied = countApplied(controllers);
    const writer = new Writer(h, facility, 20);
    await sleep(500);
    await kafka!.restart({ downMs: 1000 }); // the writer keeps appending throughout
    await sleep(1000);
    await writer.stop();
    const last = testPass(facility);
    await h.createPass(last);
    await converged(controllers, [...writer.expected(), last.publicId].sort(), 90_000);
    for (const [key, n] of applied) expect(n, `${key} applied ${n} times`).to.equal(1);
  });
});

type MqttBroker = { url: string; restart(downMs?: number): Promise<void>; stop(): Promise<void> };

async function aedesOnFixedPort(): Promise<MqttBroker> {
  const port = await freePort();
  let broker: EmbeddedBroker = await startEmbeddedBroker({ port });
  return {
    url: broker.url,
    async restart(downMs = 500) {
      await broker.close();
      await sleep(downMs);
      broker = await startEmbeddedBroker({ port });
    },
    stop: () => broker.close(),
  };
}

for (const kind of ['mosquitto', 'aedes'] as const) {
  describe(`door path recovery: ${kind} restart without persistence`, function () {
    this.timeout(90_000);
    let broker: MqttBroker;
    let h: DoorHarness;

    before(async function () {
      if (kind === 'mosquitto') {
        const binary = mosquittoBinary();
        if (!binary) {
          if (inCI) throw new Error('mosquitto is not installed (.ci/mosquitto.sh installs it); CI requires it');
          console.warn('  skipping: no mosquitto binary');
          return this.skip();
        }
        await requireKafka(this);
        broker = await MosquittoInstance.start(binary);
      } else {
        broker = await aedesOnFixedPort();
      }
      h = await DoorHarness.start({ kind: kind === 'mosquitto' ? 'real' : 'embedded', label: `door_${kind}_restart`, mqttUrl: broker.url });
    });

    after(async () => {
      await h?.stop();
      await broker?.stop();
    });

    it('retained allow-list, sessions and missed changes are rebuilt by the gateway and the controllers', async () => {
      const facility = uniqueFacilityId();
      const persistent = await h.controller(facility);
      const clean = await h.controller(facility, { clean: true });
      const passes = [testPass(facility), testPass(facility), testPass(facility)];
      for (const p of passes) await h.createPass(p);
      await converged([persistent, clean], passes.map((p) => p.publicId).sort(), 15_000);

      await broker.restart(700);
      // Changes made while the broker was down: their publishes wait in the gateway.
      await h.revokePass(passes[0]!);
      const added = testPass(facility);
      await h.createPass(added);

      const expected = [passes[1]!, passes[2]!, added].map((p) => p.publicId).sort();
      await converged([persistent, clean], expected, 30_000);
      for (const c of [persistent, clean]) {
        expect(c.scan({ qrValue: passes[0]!.qrValue }).result).to.equal('denied');
        expect(c.scan({ qrValue: added.qrValue }).result).to.equal('granted');
      }
      // The broker lost every retained message: the gateway put the allow-list back.
      const fresh = await h.controller(facility);
      await converged([fresh], expected, 15_000);
      expect(fresh.digestHex).to.equal(h.gateway!.lists.digest(facility));
    });
  });
}
