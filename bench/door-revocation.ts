// Revocation latency through the real door path: `npx tsx bench/door-revocation.ts
//   [--facilities 10] [--passes 10000] [--rate 50] [--seconds 10] [--controllers 2]`.
// Needs the CI brokers: Kafka on 127.0.0.1:9092 (.ci/kafka/start.sh) and Mosquitto on
// 127.0.0.1:1883 (.ci/mosquitto.sh), or KAFKA_BROKERS / MQTT_URL.
//
// The real stack in-process (HTTP apps, PostgreSQL event store, projections) plus the door path
// (forwarder -> Kafka -> door-gateway -> Mosquitto -> simulated controllers). It creates the
// active passes through POST /api/v1/org/passes, waits until every controller holds its
// facility's list, then revokes passes with DELETE at a fixed rate (open loop) and measures, for
// each, the time from the DELETE response to the gateway receiving the LAST acknowledgement of
// the removal from that facility's controllers. An acknowledgement that arrives before the
// response (the doors were closed before the client heard back) counts as 0 ms.
// Targets: p50 under 100 ms, p99 under 500 ms at 50 revocations/s, 10 facilities, 10,000 passes.
import http from 'node:http';
import { startStack, passBody } from '../test/support/stack.js';
import { runThenExit } from './run-then-exit.js';
import { stopTestDatabases, databaseKind } from '../test/support/database.js';
import { tcpReachable } from '../test/support/components.js';
import { DoorHarness } from '../test/door/support/door-harness.js';
import { KAFKA_BROKERS, MOSQUITTO_URL } from '../test/door/support/door-components.js';
import type { AckObservation } from '../door-gateway/door-gateway.js';
import type { ControllerSimulator } from '../door-gateway/controller-simulator.js';
import { percentile } from './percentile.js';
import { numberOption } from './command-line-options.js';

const FACILITIES = numberOption('facilities', 10);
const PASSES = numberOption('passes', 10_000);
const RATE = numberOption('rate', 50);
const SECONDS = numberOption('seconds', 10);
const CONTROLLERS = numberOption('controllers', 2);
const ADMINS = 4;
const SETUP_TIMEOUT_MS = 240_000;

async function waitUntil(what: string, check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function main(): Promise<void> {
  const [kHost, kPort] = KAFKA_BROKERS[0]!.split(':');
  const mqtt = new URL(MOSQUITTO_URL);
  if (!(await tcpReachable(kHost!, Number(kPort))) || !(await tcpReachable(mqtt.hostname, Number(mqtt.port || 1883)))) {
    console.error(`needs Kafka on ${KAFKA_BROKERS[0]} (.ci/kafka/start.sh) and Mosquitto on ${MOSQUITTO_URL} (.ci/mosquitto.sh)`);
    process.exitCode = 1;
    return;
  }
  console.log(`starting the stack (${databaseKind()} PostgreSQL) and the door path (Kafka ${KAFKA_BROKERS.join(',')}, Mosquitto ${MOSQUITTO_URL}) ...`);
  const stack = await startStack({ label: 'bench_door' });
  const door = await DoorHarness.start({
    kind: 'real',
    label: 'bench_door',
    database: { url: stack.databaseUrl, knex: stack.db, store: stack.store },
    reactor: false,
    expirySweepMs: 5000,
  });
  try {
    const orgId = await stack.seed.organization({ inviteAllowance: 1_000_000 });
    const facilities: number[] = [];
    for (let i = 0; i < FACILITIES; i++) facilities.push(await stack.seed.facility(orgId, { name: `Entrance ${i + 1}` }));
    const keys: string[] = [];
    for (let i = 0; i < ADMINS; i++) {
      const userId = await stack.seed.admin(orgId, { inviteAllowance: 1_000_000 });
      keys.push((await stack.seed.apiKey(orgId, userId, { scopes: ['org:passes:write'] })).apiKey);
    }
    const controllers = new Map<number, ControllerSimulator[]>();
    for (const f of facilities) {
      const list: ControllerSimulator[] = [];
      for (let i = 0; i < CONTROLLERS; i++) list.push(await door.controller(f));
      controllers.set(f, list);
    }

    const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
    const call = (method: string, path: string, apiKey: string, json?: unknown) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const body = json === undefined ? undefined : JSON.stringify(json);
        const req = http.request(
          new URL(path, stack.baseUrl),
          {
            method,
            agent,
            headers: { Authorization: `Bearer ${apiKey}`, ...(body ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } : {}) },
          },
          (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (c: string) => (text += c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
          },
        );
        req.on('error', reject);
        req.end(body);
      });

    // 1. Active passes: batches of 10, spread over facilities and admins, 16 requests in flight.
    const today = new Date().toISOString().slice(0, 10);
    const created: Array<{ publicId: string; facilityId: number; apiKey: string }> = [];
    const setupStarted = Date.now();
    const batches = Math.ceil(PASSES / 10);
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < batches) {
          const n = next++;
          const facilityId = facilities[n % facilities.length]!;
          const apiKey = keys[n % keys.length]!;
          const res = await call('POST', '/api/v1/org/passes', apiKey, passBody(facilityId, { arrival_date: today, quantity: Math.min(10, PASSES - n * 10) }));
          if (res.status !== 201) throw new Error(`create failed: ${res.status} ${res.body}`);
          const rows = await stack.db('pass_list').where({ batch_id: (await stack.db('pass_list').where({ public_id: JSON.parse(res.body).public_id }).first()).batch_id });
          for (const r of rows) created.push({ publicId: r.public_id, facilityId, apiKey });
        }
      }),
    );
    console.log(`created ${created.length} passes over ${FACILITIES} facilities in ${((Date.now() - setupStarted) / 1000).toFixed(1)} s`);
    const perFacility = new Map<number, number>();
    for (const c of created) perFacility.set(c.facilityId, (perFacility.get(c.facilityId) ?? 0) + 1);
    await waitUntil(
      'every controller to hold its facility list',
      () => [...controllers].every(([f, list]) => list.every((c) => c.credentialCount === perFacility.get(f))),
      SETUP_TIMEOUT_MS,
    );
    console.log(`${controllers.size * CONTROLLERS} controllers in sync after ${((Date.now() - setupStarted) / 1000).toFixed(1)} s (gateway resyncs so far: ${door.gateway!.stats.resyncs})`);

    // 2. Revocations at RATE per second, open loop, for SECONDS.
    const total = Math.min(created.length, Math.round(RATE * SECONDS));
    const victims = created.sort(() => Math.random() - 0.5).slice(0, total);
    const waiting = new Map<string, { facilityId: number; pending: Set<string>; lastAckAt: number | null; respondedAt: number | null }>();
    door.gateway!.on('ack', (a: AckObservation) => {
      if (a.op !== 'remove') return;
      const w = waiting.get(a.credentialId);
      if (!w || !w.pending.delete(a.controllerId)) return;
      if (w.pending.size === 0) w.lastAckAt = performance.now();
    });
    const latencies: number[] = [];
    const gatewayLatencies: number[] = [];
    door.gateway!.on('ack', (a: AckObservation) => {
      if (a.op === 'remove' && a.latencyMs !== null && waiting.has(a.credentialId)) gatewayLatencies.push(a.latencyMs);
    });
    const started = performance.now();
    const requests: Promise<void>[] = [];
    for (let i = 0; i < total; i++) {
      const due = started + (i * 1000) / RATE;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const v = victims[i]!;
      const entry = { facilityId: v.facilityId, pending: new Set(controllers.get(v.facilityId)!.map((c) => c.controllerId)), lastAckAt: null as number | null, respondedAt: null as number | null };
      waiting.set(v.publicId, entry);
      requests.push(
        call('DELETE', `/api/v1/org/passes/${v.publicId}`, v.apiKey).then((res) => {
          if (res.status !== 200) throw new Error(`revoke failed: ${res.status} ${res.body}`);
          entry.respondedAt = performance.now();
        }),
      );
    }
    await Promise.all(requests);
    const sent = performance.now();
    await waitUntil('the last acknowledgements', () => [...waiting.values()].every((w) => w.lastAckAt !== null), 30_000).catch((e: Error) =>
      console.error(e.message),
    );
    let beforeResponse = 0;
    for (const w of waiting.values()) {
      if (w.lastAckAt === null || w.respondedAt === null) continue;
      const ms = w.lastAckAt - w.respondedAt;
      if (ms < 0) beforeResponse++;
      latencies.push(Math.max(0, ms));
    }
    latencies.sort((a, b) => a - b);
    gatewayLatencies.sort((a, b) => a - b);
    const missing = [...waiting.values()].filter((w) => w.lastAckAt === null).length;
    const fmt = (ms: number) => `${ms.toFixed(1)} ms`;
    console.log('');
    console.log(`door revocation latency (${FACILITIES} facilities x ${CONTROLLERS} controllers, ${created.length} active passes, Kafka + Mosquitto)`);
    console.log(`  revocations        ${total} at ${(total / ((sent - started) / 1000)).toFixed(1)}/s (target ${RATE}/s)`);
    console.log(`  DELETE response -> last controller ack   p50 ${fmt(percentile(latencies, 50))}   p90 ${fmt(percentile(latencies, 90))}   p99 ${fmt(percentile(latencies, 99))}   max ${fmt(latencies.at(-1) ?? NaN)}`);
    console.log(`  acked before the DELETE response: ${beforeResponse}; never acked: ${missing}`);
    console.log(`  event recorded -> each ack (gateway)     p50 ${fmt(percentile(gatewayLatencies, 50))}   p99 ${fmt(percentile(gatewayLatencies, 99))}`);
    console.log(`  targets: p50 < 100 ms, p99 < 500 ms -> ${percentile(latencies, 50) < 100 && percentile(latencies, 99) < 500 && missing === 0 ? 'met' : 'NOT met'}`);
    agent.destroy();
  } finally {
    await door.stop();
    await stack.stop();
    await stopTestDatabases();
  }
}

runThenExit(main);
