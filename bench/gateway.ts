// The pass API through the production gateway: `npx tsx bench/gateway.ts [--seconds 10] [--warmup 3] [--concurrency 16] [--samples 400]`.
// Runs the production topology (test/topology/support): each service as its own
// `node dist/<service>/main.js` process, nginx in front over https with deploy/gateway.nginx.conf,
// on DATABASE_URL's server (a fresh database) or an embedded one. The door path is left out
// (no Kafka, no door-gateway): what is measured is the HTTP path of the pass API.
//
//   1. throughput and p99 of a steady mix (half creates, half listings of 20) with `concurrency`
//      requests in flight, with one instance of each service, then with two: the ratio of the two;
//   2. the latency the gateway adds: one request at a time, the same listing through nginx over
//      https and straight to the query instance over http, interleaved (one instance of each).
// Every request carries a client address of its own from a terminator the gateway trusts, so
// the per-address rate limits (300 a minute) never answer instead of the service. Creates do
// not wait for their email (DELIVERY_WAIT_MS=0); each waits for the read models as in production.
// The figures depend on the machine: print its cores beside them.
import os from 'node:os';
import path from 'node:path';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { randomInt } from 'node:crypto';
import { Agent, request } from 'undici';
import { freshDatabase, databaseKind, stopTestDatabases } from '../test/support/database.js';
import { makeCertificate, nginxBinary, ROOT } from '../test/topology/support/nginx-gateway.js';
import { buildOnce, Topology } from '../test/topology/support/topology.js';
import { GatewayClient } from '../test/topology/support/gateway-client.js';
import { OperatorCli } from '../test/topology/support/operator-cli.js';
import { percentile } from './percentile.js';
import { integerOption, numberOption } from './command-line-options.js';
import { runThenExit } from './run-then-exit.js';
import { machineCpuSeconds, processCpuSeconds, procStat } from './oauth-bench/machine-cpu.js';
import { readdirSync } from 'node:fs';

const SECONDS = numberOption('seconds', 10);
const CONCURRENCY = integerOption('concurrency', 16);
const SAMPLES = integerOption('samples', 400);
const WARMUP_MS = numberOption('warmup', 3) * 1000;
const ADMINS = 8;

interface MixResult {
  readonly instances: number;
  /** CPU milliseconds per request, by process kind, over the measured window. */
  readonly cpuPerRequest: Record<string, number>;
  /** Share of the machine's CPU (all cores) that was busy. */
  readonly machineBusy: number | null;
  readonly requestsPerSecond: number;
  readonly createsPerSecond: number;
  readonly p50: { create: number; list: number };
  readonly p99: { create: number; list: number };
  readonly failed: number;
}

/** A client address per request: the rate limits count per address. */
function someAddress(): string {
  return `10.${randomInt(256)}.${randomInt(256)}.${1 + randomInt(254)}`;
}

async function seed(cli: OperatorCli): Promise<{ keys: string[]; facilityId: number }> {
  const orgId = (await cli.run('org', 'create', '--name', 'Bench Org', '--invite-allowance', '1000000')).id as number;
  const facilityId = (await cli.run('facility', 'create', '--org', String(orgId), '--name', 'Bench Gate')).id as number;
  const keys = await Promise.all(
    Array.from({ length: ADMINS }, async (_, i) => {
      const userId = (
        await cli.run('user', 'create', '--org', String(orgId), '--email', `bench-${i}@example.com`, '--first-name', 'Bench', '--last-name', `No${i}`,
          '--role', 'admin', '--invite-allowance', '1000000')
      ).id as number;
      return (await cli.run('apikey', 'create', '--org', String(orgId), '--user', String(userId), '--scopes', 'org:passes:read,org:passes:write')).api_key as string;
    }),
  );
  return { keys, facilityId };
}

async function mix(topology: Topology, client: GatewayClient, keys: readonly string[], facilityId: number, instances: number): Promise<MixResult> {
  const latencies = { create: [] as number[], list: [] as number[] };
  let failed = 0;
  let measuring = false;
  let running = true;
  const today = new Date().toISOString().slice(0, 10);
  const worker = async (w: number) => {
    for (let n = 0; running; n++) {
      const apiKey = keys[(w + n) % keys.length]!;
      const create = n % 2 === 0;
      const res = create
        ? await client.call('POST', '/api/v1/org/passes', {
            apiKey,
            forwardedFor: someAddress(),
            json: { first_name: `Bench ${w}-${n}`, email: `guest-${w}-${n}@example.com`, arrival_date: today, facility_id: facilityId },
          })
        : await client.call('GET', '/api/v1/org/passes?limit=20', { apiKey, forwardedFor: someAddress() });
      if (!measuring) continue;
      if (res.status !== (create ? 201 : 200)) failed++;
      else (create ? latencies.create : latencies.list).push(res.ms);
    }
  };
  const workers = Array.from({ length: CONCURRENCY }, (_, w) => worker(w));
  await sleep(WARMUP_MS);
  const pids = processesOf(topology);
  const cpuBefore = processCpuSeconds([...pids.keys()]);
  const machineBefore = machineCpuSeconds();
  const benchBefore = process.cpuUsage();
  measuring = true;
  const started = performance.now();
  await sleep(SECONDS * 1000);
  measuring = false;
  const elapsed = (performance.now() - started) / 1000;
  const cpuAfter = processCpuSeconds([...pids.keys()]);
  const machineAfter = machineCpuSeconds();
  const bench = process.cpuUsage(benchBefore);
  running = false;
  await Promise.all(workers);
  const requests = latencies.create.length + latencies.list.length;
  const cpuPerRequest: Record<string, number> = {};
  for (const [pid, kind] of pids) {
    const used = (cpuAfter.get(pid) ?? 0) - (cpuBefore.get(pid) ?? 0);
    cpuPerRequest[kind] = (cpuPerRequest[kind] ?? 0) + (used * 1000) / requests;
  }
  cpuPerRequest['load generator'] = (bench.user + bench.system) / 1000 / requests;
  if (machineBefore && machineAfter) {
    const ours = Object.values(cpuPerRequest).reduce((a, b) => a + b, 0);
    cpuPerRequest['rest (PostgreSQL, other)'] = Math.max(0, ((machineAfter.busy - machineBefore.busy) * 1000) / requests - ours);
  }
  const sorted = { create: latencies.create.sort((a, b) => a - b), list: latencies.list.sort((a, b) => a - b) };
  return {
    instances,
    cpuPerRequest,
    machineBusy: machineBefore && machineAfter ? (machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total) : null,
    requestsPerSecond: (sorted.create.length + sorted.list.length) / elapsed,
    createsPerSecond: sorted.create.length / elapsed,
    p50: { create: percentile(sorted.create, 50), list: percentile(sorted.list, 50) },
    p99: { create: percentile(sorted.create, 99), list: percentile(sorted.list, 99) },
    failed,
  };
}

/** The topology's processes by kind (nginx with its workers). */
function processesOf(topology: Topology): Map<number, string> {
  const pids = new Map<number, string>();
  for (const instance of topology.all()) if (instance.process.pid) pids.set(instance.process.pid, instance.kind);
  const master = topology.gateway.process.pid;
  if (master) {
    pids.set(master, 'nginx');
    for (const entry of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
      try {
        if (Number(procStat(entry)[1]) === master) pids.set(Number(entry), 'nginx'); // ppid
      } catch {
        // gone meanwhile
      }
    }
  }
  return pids;
}

/** The same listing, one at a time, through the gateway (https) and straight to the query instance (http), interleaved. */
async function gatewayOverhead(topology: Topology, gateway: GatewayClient, key: string): Promise<{ viaGateway: number[]; direct: number[] }> {
  const direct = new GatewayClient(topology.query[0]!.url, new Agent({ connections: 1 }));
  const viaGateway: number[] = [];
  const straight: number[] = [];
  const path = '/api/v1/org/passes?limit=20';
  try {
    for (let i = 0; i < SAMPLES + 50; i++) {
      const address = someAddress();
      const a = await gateway.call('GET', path, { apiKey: key, forwardedFor: address });
      const b = await direct.call('GET', path, { apiKey: key, forwardedFor: address });
      if (a.status !== 200 || b.status !== 200) throw new Error(`listing answered ${a.status} through the gateway, ${b.status} directly: ${a.text} ${b.text}`);
      if (i < 50) continue; // warm-up: connections, JIT
      viaGateway.push(a.ms);
      straight.push(b.ms);
    }
  } finally {
    await direct.close();
  }
  return { viaGateway: viaGateway.sort((x, y) => x - y), direct: straight.sort((x, y) => x - y) };
}

async function phase(instances: 1 | 2, dir: string, certificate: Awaited<ReturnType<typeof makeCertificate>>, nginx: string) {
  const databaseUrl = await freshDatabase(`gateway_bench_${instances}`);
  const topology = await Topology.start({
    instances,
    databaseUrl,
    door: null,
    nginxBinary: nginx,
    certificate,
    dir: path.join(dir, `x${instances}`),
    logDir: path.join(ROOT, 'test-artifacts', 'bench-gateway', `x${instances}`),
    trustedProxies: ['127.0.0.2/32'],
    // Per-request log lines are part of production's cost (LOG_LEVEL info), but not written by this process.
    env: { DELIVERY_WAIT_MS: '0' },
  });
  const client = GatewayClient.viaTerminator(topology.url, certificate.ca, CONCURRENCY);
  try {
    const { keys, facilityId } = await seed(new OperatorCli({ ...topology.env, GUESTPASS_DATA_DIR: path.join(dir, `cli${instances}`) }));
    const result = await mix(topology, client, keys, facilityId, instances);
    const overhead = instances === 1 ? await gatewayOverhead(topology, GatewayClient.viaTerminator(topology.url, certificate.ca, 1), keys[0]!) : null;
    return { result, overhead };
  } finally {
    await client.close();
    await topology.stop();
  }
}

function ms(n: number): string {
  return `${n.toFixed(1)} ms`;
}

async function main(): Promise<void> {
  const nginx = nginxBinary();
  if (!nginx) throw new Error('nginx not found (NGINX_PATH, PATH or /usr/sbin/nginx): bash .ci/nginx.sh installs it');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'guestpass-gateway-bench-'));
  await chmod(dir, 0o755);
  try {
    await buildOnce();
    const certificate = await makeCertificate(path.join(dir, 'tls'));
    console.log(
      `machine: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}; ` +
        `PostgreSQL ${databaseKind()}; ${CONCURRENCY} in flight, ${SECONDS} s per run after ${WARMUP_MS / 1000} s of warm-up`,
    );
    const one = await phase(1, dir, certificate, nginx);
    const two = await phase(2, dir, certificate, nginx);
    for (const { result: r } of [one, two]) {
      console.log(
        `${r.instances} of each: ${r.requestsPerSecond.toFixed(0)} requests/s (${r.createsPerSecond.toFixed(0)} creates/s); ` +
          `create p50 ${ms(r.p50.create)} p99 ${ms(r.p99.create)}; list p50 ${ms(r.p50.list)} p99 ${ms(r.p99.list)}; failed ${r.failed}`,
      );
      const cpu = Object.entries(r.cpuPerRequest).map(([kind, v]) => `${kind} ${v.toFixed(1)}`);
      console.log(`  CPU ms per request: ${cpu.join(', ')}; machine busy ${r.machineBusy === null ? '?' : `${(r.machineBusy * 100).toFixed(0)} %`}`);
    }
    console.log(`two of each / one of each: ${(two.result.requestsPerSecond / one.result.requestsPerSecond).toFixed(2)}x requests/s, p99 create ${(two.result.p99.create / one.result.p99.create).toFixed(2)}x`);
    const o = one.overhead!;
    console.log(
      `gateway (nginx, https, keep-alive) vs direct (http) for one listing at a time, ${o.direct.length} samples: ` +
        `p50 ${ms(percentile(o.viaGateway, 50))} vs ${ms(percentile(o.direct, 50))} (+${ms(percentile(o.viaGateway, 50) - percentile(o.direct, 50))}), ` +
        `p99 ${ms(percentile(o.viaGateway, 99))} vs ${ms(percentile(o.direct, 99))} (+${ms(percentile(o.viaGateway, 99) - percentile(o.direct, 99))})`,
    );
  } finally {
    await stopTestDatabases();
    await rm(dir, { recursive: true, force: true });
  }
}

runThenExit(main);
