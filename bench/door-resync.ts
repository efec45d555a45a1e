// Full resync of one door controller: `npx tsx bench/door-resync.ts [--credentials 10000] [--rounds 3] [--broker mosquitto|aedes]`.
// Needs Kafka on 127.0.0.1:9092 (.ci/kafka/start.sh) and, for the default broker, Mosquitto on
// 127.0.0.1:1883 (.ci/mosquitto.sh); or KAFKA_BROKERS / MQTT_URL.
//
// Puts `credentials` active passes on one facility through the real path (event store ->
// forwarder -> Kafka -> door-gateway -> broker), then measures:
//   * cold start: a controller with an empty memory and no session connects; time until its
//     allow-list digest equals the gateway's (retained messages, then the digest check and the
//     chunked resync for whatever the broker's per-client queue limit dropped);
//   * resync: the gateway sends the whole list to a connected controller; time until the
//     controller's acknowledgement of the applied snapshot reaches the gateway.
// Target: a full resync of one controller with 10,000 credentials under 5 s.
import { DoorHarness, uniqueFacilityId } from '../test/door/support/door-harness.js';
import { KAFKA_BROKERS, MOSQUITTO_URL } from '../test/door/support/door-components.js';
import { runThenExit } from './run-then-exit.js';
import { stopTestDatabases } from '../test/support/database.js';
import { tcpReachable } from '../test/support/components.js';
import { newEvent, passCreated, testPass } from '../test/door/fixtures.js';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

const CREDENTIALS = Number(arg('credentials', '10000'));
const ROUNDS = Number(arg('rounds', '3'));
const BROKER = arg('broker', 'mosquitto');
const TARGET_MS = 5000;

async function waitUntil(what: string, check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function main(): Promise<void> {
  const [kHost, kPort] = KAFKA_BROKERS[0]!.split(':');
  const mqtt = new URL(MOSQUITTO_URL);
  if (!(await tcpReachable(kHost!, Number(kPort))) || (BROKER === 'mosquitto' && !(await tcpReachable(mqtt.hostname, Number(mqtt.port || 1883))))) {
    console.error(`needs Kafka on ${KAFKA_BROKERS[0]} (.ci/kafka/start.sh) and Mosquitto on ${MOSQUITTO_URL} (.ci/mosquitto.sh)`);
    process.exitCode = 1;
    return;
  }
  const h = await DoorHarness.start({ kind: BROKER === 'aedes' ? 'embedded' : 'real', label: 'bench_resync', reactor: false, expirySweepMs: 5000 });
  try {
    const facility = uniqueFacilityId();
    h.facilities.add(facility);
    const setup = Date.now();
    for (let i = 0; i < CREDENTIALS; i += 100) {
      const events = Array.from({ length: Math.min(100, CREDENTIALS - i) }, () => newEvent(passCreated(testPass(facility))));
      await h.store.appendToStream(`guest-invites-${i / 100}-bench`, events, 'any');
    }
    await waitUntil('the gateway to hold every credential', () => h.gateway!.lists.count(facility) === CREDENTIALS, 180_000);
    console.log(`${CREDENTIALS} credentials on facility ${facility} through Kafka to the gateway in ${((Date.now() - setup) / 1000).toFixed(1)} s (${BROKER})`);
    const digest = h.gateway!.lists.digest(facility);

    const cold: number[] = [];
    const resync: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Cold start: empty memory, no session.
      const resyncsBefore = h.gateway!.stats.resyncs;
      const t0 = performance.now();
      const controller = await h.controller(facility, { clean: true });
      await controller.waitFor((c) => c.digestHex === digest, 60_000, 'digest match');
      cold.push(performance.now() - t0);
      const viaResync = h.gateway!.stats.resyncs > resyncsBefore;

      // Explicit full resync of the connected controller (once any resync of the cold start is acknowledged).
      await new Promise((resolve) => setTimeout(resolve, 300));
      let syncId = '';
      const onResync = (e: { controllerId: string; syncId: string }) => {
        if (e.controllerId === controller.controllerId) syncId = e.syncId;
      };
      h.gateway!.on('resync', onResync);
      const synced = new Promise<number>((resolve) => {
        const onSynced = (e: { controllerId: string; syncId: string; credentialCount: number }) => {
          if (e.controllerId !== controller.controllerId || e.syncId !== syncId) return;
          h.gateway!.off('synced', onSynced);
          resolve(e.credentialCount);
        };
        h.gateway!.on('synced', onSynced);
      });
      const start = performance.now();
      h.gateway!.resync(facility, controller.controllerId);
      h.gateway!.off('resync', onResync);
      if (!syncId) throw new Error('the gateway did not start a resync (one still in flight?)');
      const count = await synced;
      resync.push(performance.now() - start);
      if (count !== CREDENTIALS) throw new Error(`resync delivered ${count} credentials`);
      console.log(
        `  round ${round + 1}: cold start to in-sync ${cold.at(-1)!.toFixed(0)} ms${viaResync ? ' (completed by a digest-triggered resync)' : ''}; ` +
          `explicit resync ${resync.at(-1)!.toFixed(0)} ms (${count} credentials)`,
      );
      await controller.stop();
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    console.log('');
    console.log(`door controller full resync, ${CREDENTIALS} credentials, ${BROKER}`);
    console.log(`  cold start (connect -> digest equal)   median ${median(cold).toFixed(0)} ms   max ${Math.max(...cold).toFixed(0)} ms`);
    console.log(`  resync (send -> controller's ack)      median ${median(resync).toFixed(0)} ms   max ${Math.max(...resync).toFixed(0)} ms`);
    console.log(`  target: under ${TARGET_MS} ms -> ${Math.max(...cold, ...resync) < TARGET_MS ? 'met' : 'NOT met'}`);
  } finally {
    await h.stop();
    await stopTestDatabases();
  }
}

runThenExit(main);
