// Single-pass create through HTTP: `npx tsx bench/http-create-pass.ts [--seconds 15] [--warmup 5] [--concurrency 10] [--admins 1] [--delivery-only] [--cpu-profile DIR]`.
// Runs the real stack in-process (embedded PostgreSQL, or DATABASE_URL's server; PostgreSQL event
// store; projection runner; command and query apps behind the gateway on an ephemeral port) and
// drives POST /api/v1/org/passes with one organization API key, `concurrency` requests in flight
// for a bounded time. Every answer waits for the read models (read-your-writes), as in production.
// All passes of one admin in one month live on one stream (the allowance's consistency boundary),
// so one key's creates are appended one after another; `--admins N` spreads the load over N admins
// with a key each, to show what the stack does when that stream is not the limit.
// Targets: at least 500 creates/s, p99 under 50 ms.
//
// Then the same with pass delivery (issue 15): a second stack whose delivery worker sends each
// batch's email and SMS to a real SMTP server (smtp-server) and an SMS webhook, both in a process
// of their own; every create waits for its two messages to be accepted (DELIVERY_WAIT_MS), as
// in production. Target: at least 200 batches/s, and no worse than 0.7x the run without delivery.
// Between the two, the floor (delivery-floor.ts): the same messages through the same senders to
// the same providers, with no service; the ratio it alone permits bounds what the service can reach.
// `--cpu-profile DIR` writes a CPU profile of the stack's process over each measured window to DIR
// (its figures then carry the profiler's cost).
import { Pool } from 'undici';
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import os from 'node:os';
import { startStack, passBody } from '../test/support/stack.js';
import { stopTestDatabases, databaseKind } from '../test/support/database.js';
import { percentile } from './percentile.js';
import { numberOption } from './command-line-options.js';
import { machineCpuSeconds, processCpuSeconds } from './oauth-bench/machine-cpu.js';
import { withServiceNodeFlags } from './service-node-flags.js';
import { startCpuProfile } from './cpu-profile.js';
import { startLocalSmsWebhook, startLocalSmtp } from '../test/delivery/local-providers.js';
import { SmtpMailSender } from '../shared/delivery/smtp-mail-sender.js';
import { SmsWebhookSender } from '../shared/delivery/sms-webhook-sender.js';
import { measureDeliveryFloor, type DeliveryFloor } from './delivery-floor.js';

const SECONDS = numberOption('seconds', 15);
const CONCURRENCY = numberOption('concurrency', 10);
const ADMINS = numberOption('admins', 1);
const DELIVERY_ONLY = process.argv.includes('--delivery-only');
const PROFILE_DIR = process.argv.includes('--cpu-profile') ? process.argv[process.argv.indexOf('--cpu-profile') + 1] : undefined;
// Long enough for JIT and for autovacuum to analyse the fresh tables (plans made on empty tables are poor).
const WARMUP_MS = numberOption('warmup', 5) * 1000;
/** The floor needs no tables warmed up, only JIT and connections; a few seconds of it are enough. */
const FLOOR_WARMUP_MS = Math.min(2000, WARMUP_MS);
const FLOOR_SECONDS = Math.min(SECONDS, 5);

interface PhaseResult {
  readonly throughput: number;
  readonly p99: number;
  /** Machine CPU per create, ms. */
  readonly machineMs: number;
  /** CPU per create of the bench's own processes (stack, PostgreSQL, load generator, providers), ms. */
  readonly ownMs: number;
}

async function main(): Promise<void> {
  const plain = DELIVERY_ONLY ? null : await phase(null);
  const providers = await startProviders();
  const floor = await deliveryFloor(providers);
  const delivered = await phase(providers);
  providers.child.kill();
  console.log('');
  if (plain) {
    const ratio = delivered.throughput / plain.throughput;
    console.log(
      `with delivery / without: ${delivered.throughput.toFixed(0)} / ${plain.throughput.toFixed(0)} creates/s = ${ratio.toFixed(2)}x` +
        `   (target >= 200/s: ${delivered.throughput >= 200 ? 'met' : 'NOT met'}; >= 0.7x: ${ratio >= 0.7 ? 'met' : 'NOT met'})`,
    );
  }
  const floorOwnMs = floor.processMsPerPair + floor.providersMsPerPair;
  const rows: Array<[string, string, number, number]> = [
    ...(plain ? [['without delivery', `${plain.throughput.toFixed(0)} creates/s`, plain.machineMs, plain.ownMs] as [string, string, number, number]] : []),
    ['with delivery', `${delivered.throughput.toFixed(0)} creates/s`, delivered.machineMs, delivered.ownMs],
    ['transports alone (floor)', `${floor.pairsPerSecond.toFixed(0)} pairs/s`, floor.machineMsPerPair, floorOwnMs],
  ];
  // The machine's figure is what the issue's ratio follows; the bench's own processes' figure
  // leaves out other work on a shared machine.
  console.log('CPU per create (or per email + SMS pair):   machine   bench processes');
  for (const [name, rate, machine, own] of rows) console.log(`  ${name.padEnd(26)} ${rate.padStart(14)}   ${machine.toFixed(2).padStart(5)} ms   ${own.toFixed(2).padStart(5)} ms`);
  if (plain) {
    // Were the service's delivery path free, each delivered create would still cost its plain
    // create plus the transports; on a CPU-bound machine throughput goes as 1 / CPU per create.
    const bound = (plainMs: number, floorMs: number, deliveredMs: number) =>
      `permits ${(plainMs / (plainMs + floorMs)).toFixed(2)}x; the delivery path costs ${(deliveredMs - plainMs).toFixed(2)} ms per create, ${(deliveredMs - plainMs - floorMs).toFixed(2)} ms above the floor`;
    console.log(`the floor alone (without-delivery CPU / (that + floor CPU)), by machine CPU: ${bound(plain.machineMs, floor.machineMsPerPair, delivered.machineMs)}`);
    console.log(`                                              by the bench's processes: ${bound(plain.ownMs, floorOwnMs, delivered.ownMs)}`);
  }
  await stopTestDatabases();
}

/** The transports alone, to the providers the delivery run uses (delivery-floor.ts). */
async function deliveryFloor(providers: Providers): Promise<DeliveryFloor> {
  console.log(`measuring the delivery transports alone for ${FLOOR_SECONDS} s at concurrency ${CONCURRENCY} ...`);
  const floor = await measureDeliveryFloor({ ...providers, pid: providers.child.pid }, { concurrency: CONCURRENCY, seconds: FLOOR_SECONDS, warmupMs: FLOOR_WARMUP_MS });
  console.log('');
  console.log('delivery transports alone (no service): the same email and SMS, the same senders and providers');
  console.log(`  pairs         ${floor.pairs} in ${FLOOR_SECONDS} s, concurrency ${CONCURRENCY}: ${floor.pairsPerSecond.toFixed(0)} pairs/s`);
  console.log(
    `  CPU/pair      senders ${floor.processMsPerPair.toFixed(2)} ms   providers ${floor.providersMsPerPair.toFixed(2)} ms   machine ${floor.machineMsPerPair.toFixed(2)} ms   (machine busy ${floor.machineBusyPercent.toFixed(0)} %)`,
  );
  console.log('');
  return floor;
}

interface Providers {
  readonly child: ReturnType<typeof fork>;
  readonly smtpUrl: string;
  readonly smsUrl: string;
}

/** The SMTP server and SMS webhook, in a process of their own (their CPU is not the service's). */
async function startProviders(): Promise<Providers> {
  const child = fork(fileURLToPath(import.meta.url), ['--providers'], { execArgv: process.execArgv });
  const urls = await new Promise<{ smtpUrl: string; smsUrl: string }>((resolve, reject) => {
    child.once('message', (m) => resolve(m as { smtpUrl: string; smsUrl: string }));
    child.once('error', reject);
  });
  return { child, ...urls };
}

async function providers(): Promise<void> {
  const [smtp, sms] = await Promise.all([startLocalSmtp(), startLocalSmsWebhook()]);
  // Kept to count; a bench's few thousand messages are a few megabytes.
  process.send!({ smtpUrl: smtp.url, smsUrl: sms.url });
  process.on('disconnect', () => process.exit(0));
}

async function phase(providers: Providers | null): Promise<PhaseResult> {
  const title = providers ? 'with email and SMS delivery' : 'without delivery';
  console.log(`starting the stack (${title}) on ${databaseKind()} PostgreSQL ...`);
  const stack = await startStack({
    label: providers ? 'bench_create_delivery' : 'bench_create',
    delivery: providers
      ? { mail: new SmtpMailSender(providers.smtpUrl, { maxConnections: 4 }), sms: new SmsWebhookSender({ url: providers.smsUrl, authToken: null }) }
      : undefined,
  });
  // The admin's monthly allowance is set far above what the run can create.
  const orgId = await stack.seed.organization({ inviteAllowance: 1_000_000 });
  const facilityId = await stack.seed.facility(orgId);
  const apiKeys: string[] = [];
  for (let i = 0; i < ADMINS; i++) {
    const userId = await stack.seed.admin(orgId, { inviteAllowance: 1_000_000 });
    apiKeys.push((await stack.seed.apiKey(orgId, userId, { scopes: ['org:passes:write'] })).apiKey);
  }

  // The load generator runs in its own process, as wrk would: on the server's event loop it
  // would take the CPU it measures.
  const child = fork(fileURLToPath(import.meta.url), ['--client', '--warmup', String(WARMUP_MS / 1000)], {
    execArgv: process.execArgv,
    env: {
      ...process.env,
      BENCH_SPEC: JSON.stringify({ baseUrl: stack.baseUrl, apiKeys, facilityId, concurrency: CONCURRENCY, seconds: SECONDS, delivery: providers !== null }),
    },
  });
  // CPU over the measured window: this process (the whole stack), PostgreSQL's processes (those
  // of the pool as grown by the warm-up, and its writers), the machine.
  const postgresPids = async () =>
    ((await stack.db.raw(
      `SELECT pid FROM pg_stat_activity WHERE datname = current_database() OR backend_type IN ('walwriter', 'checkpointer', 'background writer')`,
    )) as { rows: { pid: number }[] }).rows.map((r) => r.pid);
  let pgPids: number[] = [];
  // The providers' process too: on a shared machine, the machine's figure also holds others' work.
  const providerPids = providers?.child.pid === undefined ? [] : [providers.child.pid];
  let before: { server: NodeJS.CpuUsage; pg: Map<number, number>; providers: Map<number, number>; machine: ReturnType<typeof machineCpuSeconds> } | null = null;
  let stopProfile: Promise<() => Promise<void>> | null = null;
  const { ok, failed: failedEntries, latencies, elapsedMs, cpuSeconds: loadCpu } = await new Promise<ClientResult>((resolve, reject) => {
    child.on('message', (m) => {
      if (m !== 'measuring') return resolve(m as ClientResult);
      if (PROFILE_DIR) stopProfile = startCpuProfile(`${PROFILE_DIR}/service-${providers ? 'delivery' : 'plain'}.cpuprofile`);
      before = { server: process.cpuUsage(), pg: new Map(), providers: processCpuSeconds(providerPids), machine: machineCpuSeconds() };
      void postgresPids().then((pids) => {
        pgPids = pids;
        before!.pg = processCpuSeconds(pids);
      });
    });
    child.once('error', reject);
    child.once('exit', (code) => code !== 0 && reject(new Error(`load generator exited with ${code}`)));
  });
  const serverCpu = process.cpuUsage(before!.server);
  const pgAfter = processCpuSeconds(pgPids);
  const providersAfter = processCpuSeconds(providerPids);
  const providersCpu = providerPids.reduce((sum, pid) => sum + (providersAfter.get(pid) ?? 0) - (before!.providers.get(pid) ?? 0), 0);
  const pgCpu = [...pgAfter].reduce((sum, [pid, seconds]) => sum + seconds - (before!.pg.get(pid) ?? 0), 0);
  const machineAfter = machineCpuSeconds();
  await (await (stopProfile as Promise<() => Promise<void>> | null))?.();
  const failed = new Map(failedEntries);
  const elapsed = elapsedMs / 1000;
  latencies.sort((a, b) => a - b);

  const throughput = ok / elapsed;
  const p99 = percentile(latencies, 99);
  const ms = (v: number) => `${v.toFixed(1)} ms`;
  console.log('');
  console.log(`single-pass create ${title}, POST /api/v1/org/passes (HTTP, stack in one process, load from another, read-your-writes)`);
  console.log(`  requests      ${latencies.length} in ${elapsed.toFixed(1)} s, concurrency ${CONCURRENCY}, ${ADMINS} admin key(s)`);
  console.log(`  created       ${ok}${failed.size ? `, failed ${JSON.stringify(Object.fromEntries(failed))}` : ''}`);
  const target = providers ? 200 : 500;
  console.log(`  throughput    ${throughput.toFixed(0)} creates/s   (target >= ${target}/s: ${throughput >= target ? 'met' : 'NOT met'})`);
  console.log(`  latency       p50 ${ms(percentile(latencies, 50))}   p95 ${ms(percentile(latencies, 95))}   p99 ${ms(p99)}   max ${ms(latencies.at(-1) ?? NaN)}`);
  if (!providers) console.log(`  p99 target    < 50 ms: ${p99 < 50 ? 'met' : 'NOT met'}`);
  const perCreate = (seconds: number) => `${((seconds * 1000) / Math.max(1, latencies.length)).toFixed(2)} ms`;
  const machineBusy = before!.machine && machineAfter ? machineAfter.busy - before!.machine.busy : NaN;
  console.log(
    `  CPU/create    service ${perCreate((serverCpu.user + serverCpu.system) / 1e6)} (system ${perCreate(serverCpu.system / 1e6)})   PostgreSQL ${perCreate(pgCpu)}   load generator ${perCreate(loadCpu)}${providers ? `   providers ${perCreate(providersCpu)}` : ''}   machine ${perCreate(machineBusy)}` +
      `   (machine busy ${((100 * machineBusy) / (elapsed * os.cpus().length)).toFixed(0)} %)`,
  );
  console.log(`  machine       ${os.cpus().length} cores, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} (other work on the machine skews the tail)`);

  if (providers) {
    const [sent] = (await stack.db('pass_batches').where({ email_delivery: 'sent', sms_delivery: 'sent' }).count('* as n')) as Array<{ n: string }>;
    console.log(`  delivered     ${sent?.n} batches with both messages accepted (warm-up included)`);
  }
  await stack.stop();
  const ownSeconds = (serverCpu.user + serverCpu.system) / 1e6 + pgCpu + loadCpu + providersCpu;
  return { throughput, p99, machineMs: (machineBusy * 1000) / Math.max(1, latencies.length), ownMs: (ownSeconds * 1000) / Math.max(1, latencies.length) };
}

interface ClientResult {
  ok: number;
  failed: Array<[number, number]>;
  latencies: number[];
  elapsedMs: number;
  /** The load generator's own CPU over the measured window. */
  cpuSeconds: number;
}

/** The load generator: warm-up, then `concurrency` requests in flight for the measured time. */
async function client(): Promise<void> {
  const spec = JSON.parse(process.env.BENCH_SPEC!) as { baseUrl: string; apiKeys: string[]; facilityId: number; concurrency: number; seconds: number; delivery: boolean };
  // undici rather than node:http: less CPU per request, and every cycle the load generator
  // spends is taken from the two cores the server runs on.
  const pool = new Pool(spec.baseUrl, { connections: spec.concurrency, pipelining: 1, headersTimeout: 30_000, bodyTimeout: 30_000 });
  // The same body in both runs: without delivery nothing is sent, nor waited for.
  const body = JSON.stringify(passBody(spec.facilityId, { first_name: 'Bench', email: 'bench@example.com', phone: '+15551234567' }));
  const create = async (apiKey: string): Promise<number> => {
    const res = await pool.request({
      method: 'POST',
      path: '/api/v1/org/passes',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body,
    });
    await res.body.dump();
    return res.statusCode;
  };
  async function run(ms: number, latencies: number[] | null): Promise<{ ok: number; failed: Map<number, number> }> {
    const until = performance.now() + ms;
    let ok = 0;
    const failed = new Map<number, number>();
    await Promise.all(
      Array.from({ length: spec.concurrency }, async (_, worker) => {
        const apiKey = spec.apiKeys[worker % spec.apiKeys.length]!;
        while (performance.now() < until) {
          const started = performance.now();
          const status = await create(apiKey);
          latencies?.push(performance.now() - started);
          if (status === 201) ok++;
          else failed.set(status, (failed.get(status) ?? 0) + 1);
        }
      }),
    );
    return { ok, failed };
  }
  console.log(`warming up for ${WARMUP_MS / 1000} s ...`);
  await run(WARMUP_MS, null);
  console.log(`measuring for ${spec.seconds} s at concurrency ${spec.concurrency} ...`);
  const latencies: number[] = [];
  process.send!('measuring');
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const { ok, failed } = await run(spec.seconds * 1000, latencies);
  const cpu = process.cpuUsage(cpuBefore);
  const result: ClientResult = { ok, failed: [...failed], latencies, elapsedMs: performance.now() - started, cpuSeconds: (cpu.user + cpu.system) / 1e6 };
  await pool.close();
  process.send!(result, () => process.exit(0));
}

withServiceNodeFlags();
const role = process.argv.includes('--client') ? client() : process.argv.includes('--providers') ? providers() : main();
role.then(
  () => process.argv.includes('--client') || process.argv.includes('--providers') || process.exit(0),
  (error: unknown) => {
    console.error(error);
    void stopTestDatabases().finally(() => process.exit(1));
  },
);
