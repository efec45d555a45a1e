// The token endpoint against a peer, side by side in one run:
//   `npx tsx bench/oauth-vs-oidc-provider.ts [--seconds 5] [--concurrency 16] [--warmup 2] [--cpu-profile DIR]`
// (--cpu-profile: our server writes a .cpuprofile of each measured window to DIR, {phase}.cpuprofile,
// for bench/cpu-profile-summary.ts)
//
// Three phases, each run against our service, then against oidc-provider (npm) in memory and with a
// durable Redis adapter (appendfsync always, a redis-server the bench starts), configured for
// the same features (bench/oauth-bench/peer-server.ts), with the same load:
//   code exchange   POST token, grant_type=authorization_code, public client, PKCE S256
//   refresh         POST token, grant_type=refresh_token, public client, rotating: each virtual
//                   client chains its own token
//   introspection   POST introspect, confidential client (HTTP Basic), its own access tokens
// Each server runs in a child process of its own, the load generator in a third; this process
// only prepares inputs (codes are made just before their phase: they live 60 s) and prints.
// One script past 500 lines: the three phases share its inputs and table; the servers, load and
// adapter are modules of their own (bench/oauth-bench/).
//
// The physical floor is measured first, in this process before any child starts: the CPU one RS256
// signature and one verification take with the service's own token code (jose), hence how many one
// core makes per second. Code exchange and refresh each sign two JWTs (access token and id_token),
// introspection verifies one, so each figure is printed as a fraction of its floor (req/s against
// one core of pure crypto), and as the crypto's share of the CPU each request really took (server
// plus PostgreSQL): the second holds however busy the machine is with other work, the first not.
// Also per request: the CPU of the server process, of its PostgreSQL backends, of the load generator,
// and how many cores other work on the machine kept busy during the window.
//
// Targets (ours, this 2-core machine): refresh >= 1,000/s, introspection >= 5,000/s, code exchange
// >= 500/s. Exits non-zero when a server answers anything but a correct 200 in a measured window,
// or when a phase cannot run (our endpoints not built, codes refused, ...).
import { fork, spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import os from 'node:os';
import { decodeProtectedHeader } from 'jose';
import { percentile } from './percentile.js';
import { RpcClient } from './oauth-bench/rpc.js';
import { measureSigningFloor, type SigningFloor } from './oauth-bench/signing-floor.js';
import { machineCpuSeconds, processCpuSeconds } from './oauth-bench/machine-cpu.js';
import type { IssuedCode, Phase, RunResult, RunSpec, ServerInfo, Target } from './oauth-bench/protocol.js';
import { numberOption } from './command-line-options.js';
import { withServiceNodeFlags } from './service-node-flags.js';

const SECONDS = numberOption('seconds', 5);
const CONCURRENCY = Math.round(numberOption('concurrency', 16));
const WARMUP_SECONDS = numberOption('warmup', 2);
/** Codes for the code-exchange warm-up (it ends early when they run out). */
const WARMUP_CODES = Math.max(1000, CONCURRENCY * 50);
/** Access tokens the introspection phase cycles through. */
const INTROSPECTED_TOKENS = 64;
/** Authorization codes live 60 s (spec): made later than this before use, they would expire. */
const CODE_LIFETIME_BUDGET_S = 50;
const FLOOR_MS = 1000;
const PROFILE_DIR = process.argv.includes('--cpu-profile') ? process.argv[process.argv.indexOf('--cpu-profile') + 1] : undefined;

/** Per phase: RS256 operations per request (jose), and the target for ours. */
const PHASES: readonly { phase: Phase; title: string; target: number; operation: 'sign' | 'verify'; operations: number; floorWhy: string }[] = [
  { phase: 'code', title: 'code exchange', target: 500, operation: 'sign', operations: 2, floorWhy: '2 signatures' },
  { phase: 'refresh', title: 'refresh grant', target: 1000, operation: 'sign', operations: 2, floorWhy: '2 signatures' },
  { phase: 'introspect', title: 'introspection', target: 5000, operation: 'verify', operations: 1, floorWhy: '1 verification' },
];

/** CPU milliseconds the phase's RS256 work costs per request. */
const cryptoMsPerRequest = (spec: (typeof PHASES)[number], floor: SigningFloor) => floor[spec.operation].cpuMs * spec.operations;
/** The floor: requests per second one core could answer if it did nothing but that RS256 work. */
const floorRate = (spec: (typeof PHASES)[number], floor: SigningFloor) => 1000 / cryptoMsPerRequest(spec, floor);

interface Server {
  readonly rpc: RpcClient;
  info: ServerInfo | null;
  /** Why this server cannot be measured at all (e.g. our endpoints are not built yet). */
  unavailable: string | null;
}

interface Measured {
  readonly rps: number;
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
  readonly requests: number;
  readonly elapsedS: number;
  readonly failures: Record<string, number>;
  readonly failureSamples: readonly string[];
  readonly warmupFailures: Record<string, number>;
  readonly serverCpuMsPerRequest: number;
  readonly postgresCpuMsPerRequest: number | null;
  readonly generatorCpuMsPerRequest: number;
  readonly machineBusyCores: number | null;
  /** Cores busy with anything but the server, PostgreSQL and the load generator (other work on the machine). */
  readonly otherCores: number | null;
  /** The first correct answer's tokens, described (alg, typ). */
  readonly sample: string | null;
  readonly notes: string[];
}

type Outcome = { readonly measured: Measured } | { readonly error: string };

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

function forkChild(name: string, script: string, env: NodeJS.ProcessEnv = {}): RpcClient {
  const child = fork(here(script), [], { execArgv: process.execArgv, env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new RpcClient(name, child);
}

/**
 * The durable peer's store: a redis-server of its own on a free port, `appendfsync always` (each
 * write fsync'd to its append-only file before it is answered), in a temporary folder. Never the
 * machine's shared Redis, whose configuration is not the bench's to change.
 */
async function startDurableRedis(): Promise<{ url: string; stop(): Promise<void> }> {
  const port = await new Promise<number>((resolve, reject) => {
    const probe = net.createServer().once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port: free } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(free));
    });
  });
  const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-peer-redis-'));
  const child = spawn(process.env.REDIS_SERVER_PATH ?? 'redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--appendfsync', 'always', '--save', ''], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    child.kill('SIGTERM');
    await Promise.race([exited, sleep(10_000)]);
    await rm(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 10_000;
  for (;;) {
    const reachable = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => (socket.end(), resolve(true))).once('error', () => resolve(false));
    });
    if (reachable) return { url: `redis://127.0.0.1:${port}`, stop };
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error('redis-server did not start (REDIS_SERVER_PATH, or redis-server on PATH)');
    }
    await sleep(100);
  }
}

function targetOf(info: ServerInfo): Target {
  return { name: info.name, baseUrl: info.baseUrl, tokenPath: info.tokenPath, introspectPath: info.introspectPath, clients: info.clients };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What the tokens of an answer are (so the table compares like with like), or the introspection answer. */
function describeAnswer(body: string): string {
  const answer = JSON.parse(body) as Record<string, unknown>;
  if ('active' in answer) return `active=${String(answer.active)}, token_type=${String(answer.token_type)}, scope "${String(answer.scope)}"`;
  const jwt = (name: string) => {
    const value = answer[name];
    if (typeof value !== 'string') return `no ${name}`;
    try {
      const header = decodeProtectedHeader(value);
      return `${name} ${String(header.alg)}${header.typ ? ` typ ${header.typ}` : ' (no typ)'}`;
    } catch {
      return `${name} opaque`;
    }
  };
  return `${jwt('access_token')}, ${jwt('id_token')}, refresh_token ${typeof answer.refresh_token === 'string' ? 'yes' : 'no'}, scope "${String(answer.scope)}"`;
}

/** Our endpoints may still be under construction: say so instead of measuring 404s. */
async function probe(info: ServerInfo): Promise<string | null> {
  for (const path of [info.tokenPath, info.introspectPath]) {
    const res = await fetch(info.baseUrl + path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=bench_probe',
    });
    await res.text();
    if (res.status === 404 || res.status === 405 || res.status === 501) return `POST ${path} answers ${res.status}: not built yet`;
  }
  return null;
}

async function measurePhase(server: Server, generator: RpcClient, phase: Phase): Promise<Measured> {
  const info = server.info!;
  const target = targetOf(info);
  const notes: string[] = [];
  const createCodes = async (client: 'public' | 'confidential', count: number) => {
    const codes = await server.rpc.call<IssuedCode[]>('createCodes', { client, count });
    await server.rpc.call('settle');
    return codes;
  };
  const run = (durationMs: number, measure: boolean, codes?: readonly IssuedCode[]) =>
    generator.call<RunResult>('run', { target, phase, concurrency: CONCURRENCY, durationMs, measure, codes } satisfies RunSpec);

  let measuredCodes: IssuedCode[] | undefined;
  let warm: RunResult;
  if (phase === 'code') {
    warm = await run(WARMUP_SECONDS * 1000, false, await createCodes('public', WARMUP_CODES));
    // Enough codes for the measured window at 2.5 times the warm-up's rate (the warm-up is slower:
    // JIT); should they run out all the same, the window ends there and the note says so.
    const rate = warm.ok / (warm.elapsedMs / 1000);
    const count = Math.min(200_000, Math.max(1000, Math.ceil(rate * SECONDS * 2.5) + CONCURRENCY * 20));
    const started = performance.now();
    measuredCodes = await createCodes('public', count);
    const madeInS = (performance.now() - started) / 1000;
    notes.push(`${count} codes made in ${madeInS.toFixed(1)} s before the window`);
    if (madeInS > CODE_LIFETIME_BUDGET_S - SECONDS) notes.push('codes were made so slowly that the first ones may expire (60 s) before use');
  } else if (phase === 'refresh') {
    const codes = await createCodes('public', CONCURRENCY);
    await generator.call('startChains', { target, codes, concurrency: CONCURRENCY });
    warm = await run(WARMUP_SECONDS * 1000, false);
    const live = await generator.call<number>('liveChains', { target });
    if (live < CONCURRENCY) {
      throw new Error(`${CONCURRENCY - live} of ${CONCURRENCY} refresh chains broke in the warm-up: ${JSON.stringify(warm.failures)} ${warm.failureSamples.join(' | ')}`);
    }
  } else {
    const codes = await createCodes('confidential', INTROSPECTED_TOKENS);
    await generator.call('collectAccessTokens', { target, codes, concurrency: CONCURRENCY });
    warm = await run(WARMUP_SECONDS * 1000, false);
  }
  await server.rpc.call('settle');

  const cpuBefore = await server.rpc.call<number>('cpu');
  const pgBefore = processCpuSeconds(await server.rpc.call<number[]>('postgresPids'));
  const machineBefore = machineCpuSeconds();
  const profiled = PROFILE_DIR !== undefined && info.name === 'guestpass';
  if (profiled) await server.rpc.call('startProfile', { file: path.resolve(PROFILE_DIR, `${phase}.cpuprofile`) });
  const windowStarted = performance.now();
  const result = await run(SECONDS * 1000, true, measuredCodes);
  // The snapshots' own interval (the run's plus the calls' way there and back on a busy machine).
  const windowS = (performance.now() - windowStarted) / 1000;
  const machineAfter = machineCpuSeconds();
  const cpuAfter = await server.rpc.call<number>('cpu');
  if (profiled) await server.rpc.call('stopProfile');
  // Backends that came and went within the window are missed; the pool keeps its connections.
  const pgAfter = processCpuSeconds(await server.rpc.call<number[]>('postgresPids'));

  const requests = result.latencies.length;
  const elapsedS = result.elapsedMs / 1000;
  const serverCpuS = (cpuAfter - cpuBefore) / 1e6;
  const pgCpuS = pgAfter.size > 0 ? [...pgAfter].reduce((sum, [pid, s]) => sum + s - (pgBefore.get(pid) ?? 0), 0) : null;
  const machineBusyCores = machineBefore && machineAfter ? (machineAfter.busy - machineBefore.busy) / windowS : null;
  const latencies = result.latencies.sort((a, b) => a - b);
  const perRequest = (seconds: number) => (requests ? (seconds * 1000) / requests : NaN);
  if (result.exhaustedAfterMs !== null) notes.push(`codes ran out after ${(result.exhaustedAfterMs / 1000).toFixed(1)} s of the ${SECONDS} s window`);
  return {
    rps: result.ok / (result.elapsedMs / 1000),
    p50: percentile(latencies, 50),
    p95: percentile(latencies, 95),
    p99: percentile(latencies, 99),
    requests,
    elapsedS,
    failures: result.failures,
    failureSamples: result.failureSamples,
    warmupFailures: warm.failures,
    serverCpuMsPerRequest: perRequest(serverCpuS),
    // Null for the peer (no PostgreSQL) and for a database server on another machine.
    postgresCpuMsPerRequest: pgCpuS === null ? null : perRequest(pgCpuS),
    generatorCpuMsPerRequest: perRequest(result.generatorCpuMicros / 1e6),
    machineBusyCores,
    otherCores:
      machineBusyCores === null ? null : Math.max(0, machineBusyCores - (serverCpuS + (pgCpuS ?? 0) + result.generatorCpuMicros / 1e6) / windowS),
    sample: result.sample === null ? null : describeAnswer(result.sample),
    notes,
  };
}

// ---------------------------------------------------------------------------------------------
// Printing

const pad = (s: string, n: number) => s.padEnd(n);
const lpad = (s: string, n: number) => s.padStart(n);
const fixed = (v: number, digits: number) => (Number.isFinite(v) ? v.toFixed(digits) : '-');
const ratio = (a: number, b: number) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `${(a / b).toFixed(2)}x` : '-');

function peerVersion(): string {
  try {
    return (createRequire(import.meta.url)('oidc-provider/package.json') as { version: string }).version;
  } catch {
    return '?';
  }
}

function printFloor(floor: SigningFloor): void {
  const { sign, verify } = floor;
  const line = (name: string, r: SigningFloor['sign']) =>
    `  ${pad(name, 10)}${fixed(r.cpuMs, 3)} ms CPU each = ${fixed(1000 / r.cpuMs, 0)}/s per core; ` +
    `one at a time ${fixed(r.perSecond, 0)}/s wall clock, ${r.parallel} in flight ${fixed(r.parallelPerSecond, 0)}/s`;
  console.log('');
  console.log("Signing floor (jose, RS256, 2048-bit key, the service's own mintAccessToken / verifyAccessToken, measured in this run)");
  console.log(line('sign', sign));
  console.log(line('verify', verify));
  console.log(
    `  floors    ${PHASES.map((p) => `${p.title} ${fixed(floorRate(p, floor), 0)}/s (${p.floorWhy}, ${fixed(cryptoMsPerRequest(p, floor), 2)} ms)`).join(', ')}`,
  );
  console.log('            = one core doing nothing but the phase\'s RS256 work');
}

function printTable(floor: SigningFloor, servers: readonly Server[], outcomes: Map<Phase, Map<string, Outcome>>): void {
  const header =
    pad('phase', 15) +
    pad('server', 17) +
    lpad('req/s', 7) +
    lpad('p50 ms', 8) +
    lpad('p95 ms', 8) +
    lpad('p99 ms', 8) +
    lpad('of floor', 10) +
    lpad('CPU ms/req: server', 20) +
    lpad('+PostgreSQL', 12) +
    lpad('crypto share', 14) +
    lpad('load gen', 10) +
    lpad('other cores', 13) +
    '  target (ours)';
  console.log('');
  console.log(header);
  console.log('-'.repeat(header.length));
  for (const spec of PHASES) {
    const byServer = outcomes.get(spec.phase)!;
    servers.forEach((server, index) => {
      const name = server.info?.name ?? server.rpc.name;
      const outcome = byServer.get(name);
      const first = pad(index === 0 ? spec.title : '', 15) + pad(name, 17);
      if (!outcome || 'error' in outcome) {
        console.log(first + `  not measured: ${outcome ? outcome.error.split('\n', 1)[0] : 'skipped'}`);
        return;
      }
      const m = outcome.measured;
      const ours = index === 0;
      const pg = m.postgresCpuMsPerRequest;
      const totalCpu = m.serverCpuMsPerRequest + (pg ?? 0);
      // The floor is RS256 work: a peer that verifies nothing at introspection has none.
      const floorApplies = spec.phase !== 'introspect' || server.info!.introspectionVerifies;
      const target = ours ? `  >= ${spec.target}/s: ${m.rps >= spec.target ? 'met' : 'NOT met'}` : '';
      console.log(
        first +
          lpad(fixed(m.rps, 0), 7) +
          lpad(fixed(m.p50, 1), 8) +
          lpad(fixed(m.p95, 1), 8) +
          lpad(fixed(m.p99, 1), 8) +
          lpad(floorApplies ? `${fixed((m.rps / floorRate(spec, floor)) * 100, 0)}%` : 'n/a', 10) +
          lpad(fixed(m.serverCpuMsPerRequest, 3), 20) +
          lpad(pg === null ? '-' : fixed(pg, 3), 12) +
          lpad(floorApplies ? `${fixed((cryptoMsPerRequest(spec, floor) / totalCpu) * 100, 0)}%` : 'n/a', 14) +
          lpad(fixed(m.generatorCpuMsPerRequest, 3), 10) +
          lpad(m.otherCores === null ? '-' : fixed(m.otherCores, 2), 13) +
          target,
      );
    });
    const [us, ...peers] = servers.map((s) => byServer.get(s.info?.name ?? s.rpc.name));
    peers.forEach((peer, i) => {
      const peerName = servers[i + 1]!.info?.name ?? servers[i + 1]!.rpc.name;
      if (us && peer && 'measured' in us && 'measured' in peer) {
        const a = us.measured;
        const b = peer.measured;
        const aCpu = a.serverCpuMsPerRequest + (a.postgresCpuMsPerRequest ?? 0);
        console.log(
          pad('', 15) +
            pad(`us / ${peerName.replace(/^peer /, '')}`, 17) +
            lpad(ratio(a.rps, b.rps), 7) +
            lpad(ratio(a.p50, b.p50), 8) +
            lpad(ratio(a.p95, b.p95), 8) +
            lpad(ratio(a.p99, b.p99), 8) +
            lpad('', 10) +
            lpad(ratio(a.serverCpuMsPerRequest, b.serverCpuMsPerRequest), 20) +
            lpad(`(${ratio(aCpu, b.serverCpuMsPerRequest)})`, 12),
        );
      }
    });
  }
}

/** The issue 23 targets: introspection at parity with the peer in memory, the grants with the durable peer. */
function printParity(outcomes: Map<Phase, Map<string, Outcome>>): void {
  const rps = (phase: Phase, name: string) => {
    const outcome = outcomes.get(phase)!.get(name);
    return outcome && 'measured' in outcome ? outcome.measured.rps : NaN;
  };
  console.log('');
  console.log('Parity (req/s, ours at the shipped limits)');
  for (const [phase, title, peer] of [
    ['introspect', 'introspection', 'peer in memory'],
    ['code', 'code exchange', 'peer durable'],
    ['refresh', 'refresh grant', 'peer durable'],
  ] as const) {
    const us = rps(phase, 'guestpass');
    const them = rps(phase, peer);
    const verdict = Number.isFinite(us) && Number.isFinite(them) ? (us >= them ? 'met' : 'NOT met') : 'not measured';
    console.log(`  ${pad(title, 15)}us / ${pad(peer, 16)}${lpad(ratio(us, them), 7)}  target >= 1.00x: ${verdict}`);
  }
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  console.log(`OAuth token endpoint: guestpass vs oidc-provider ${peerVersion()}, same machine, one run`);
  console.log(`  machine   ${os.cpus().length} cores (${os.cpus()[0]?.model.trim() ?? '?'}), Node ${process.version}, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  console.log(`  load      ${CONCURRENCY} virtual clients per server, keep-alive, ${WARMUP_SECONDS} s warm-up then ${SECONDS} s measured, per phase and server`);
  console.log('  limits    ours at the SHIPPED limits (nothing raised), counted where the services count them (PostgreSQL; per client in memory)');

  const loadAtStart = os.loadavg().map((l) => l.toFixed(1)).join(' ');
  console.log('measuring the signing floor (nothing of the bench runs yet) ...');
  if (PROFILE_DIR !== undefined) await mkdir(PROFILE_DIR, { recursive: true });
  const floor = await measureSigningFloor({ ms: FLOOR_MS, parallel: Math.max(2, os.cpus().length * 2) });

  const durableRedis = await startDurableRedis();
  const servers: Server[] = [
    { rpc: forkChild('guestpass', './oauth-bench/our-server.ts'), info: null, unavailable: null },
    { rpc: forkChild('peer in memory', './oauth-bench/peer-server.ts'), info: null, unavailable: null },
    { rpc: forkChild('peer durable', './oauth-bench/peer-server.ts', { PEER_REDIS_URL: durableRedis.url }), info: null, unavailable: null },
  ];
  const generator = forkChild('load generator', './oauth-bench/load-generator.ts');
  const outcomes = new Map<Phase, Map<string, Outcome>>(PHASES.map((p) => [p.phase, new Map()]));
  const problems: string[] = [];

  try {
    await Promise.all([generator.ready, ...servers.map((s) => s.rpc.ready)]);
    console.log('starting both servers (ours on a fresh migrated database) ...');
    await Promise.all(
      servers.map(async (server) => {
        try {
          server.info = await server.rpc.call<ServerInfo>('start');
        } catch (error) {
          server.unavailable = `did not start: ${(error as Error).message}`;
        }
      }),
    );
    const [ours] = servers;
    if (ours!.info) ours!.unavailable = await probe(ours!.info);
    for (const server of servers) {
      if (server.info) console.log(`  ${pad(server.info.name, 16)}${server.info.baseUrl}; ${server.info.storage}; limits: ${server.info.limits}`);
      if (server.unavailable) problems.push(`${server.rpc.name}: ${server.unavailable}`);
    }

    for (const spec of PHASES) {
      for (const server of servers) {
        const name = server.info?.name ?? server.rpc.name;
        if (server.unavailable) {
          outcomes.get(spec.phase)!.set(name, { error: server.unavailable });
          continue;
        }
        console.log(`${spec.title}: ${name} ...`);
        try {
          const measured = await measurePhase(server, generator, spec.phase);
          outcomes.get(spec.phase)!.set(name, { measured });
          if (Object.keys(measured.failures).length > 0) {
            problems.push(`${spec.title} at ${name}: failed answers in the measured window ${JSON.stringify(measured.failures)}; first: ${measured.failureSamples.join(' | ')}`);
          }
        } catch (error) {
          const message = (error as Error).message;
          outcomes.get(spec.phase)!.set(name, { error: message });
          problems.push(`${spec.title} at ${name}: ${message}`);
          if (!server.rpc.alive) server.unavailable = message;
        }
        await sleep(500); // let the server that just ran go quiet before the next one starts
      }
    }
  } finally {
    // Each child stops itself (ours drops its database); one that does not is ended.
    await Promise.all(
      [...servers.map((s) => s.rpc), generator].map(async (rpc) => {
        if (!rpc.alive) return;
        await Promise.race([rpc.call('stop').catch(() => undefined), sleep(30_000)]);
        if (rpc.alive) rpc.child.kill();
      }),
    );
    await durableRedis.stop();
  }

  printFloor(floor);
  printTable(floor, servers, outcomes);
  printParity(outcomes);

  console.log('');
  console.log('Notes');
  for (const server of servers) {
    if (!server.info) continue;
    console.log(`  ${pad(server.info.name, 16)}storage: ${server.info.storage}; introspection: ${server.info.introspects}; limits: ${server.info.limits}`);
  }
  console.log("  of floor      req/s as a fraction of the floor: one core doing nothing but the phase's RS256 work (sign twice,");
  console.log("                or verify once). jose runs RSA on libuv's thread pool, so one process can use both cores (over 100%).");
  console.log('  CPU ms/req    per answered request in the measured window: the server process (all its threads), then the');
  console.log('                PostgreSQL backends of its database and the WAL writer; the us/peer row gives server CPU, and in parentheses');
  console.log('                ours with PostgreSQL against the peer. crypto share: the RS256 work\'s CPU as a part of that CPU');
  console.log('                (server + PostgreSQL): how close the request is to the floor whatever else runs on the machine.');
  console.log('  other cores   cores busy during the window with neither the server, PostgreSQL nor the load generator: other');
  console.log('                work on the machine, which slows every wall-clock figure (req/s, latencies, the floor\'s wall rates).');
  console.log(`  runtime       Node ${process.version} for all (oidc-provider ${peerVersion()} warns that it wants Node 22 or later; it runs)`);
  console.log(`  load average  ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} at the end (${loadAtStart} at the start)`);
  for (const spec of PHASES) {
    for (const [name, outcome] of outcomes.get(spec.phase)!) {
      if (!('measured' in outcome)) continue;
      const m = outcome.measured;
      const warmupFailures = Object.keys(m.warmupFailures).length ? `; warm-up failures ${JSON.stringify(m.warmupFailures)}` : '';
      console.log(`  ${pad(`${spec.title}, ${name}:`, 30)}${m.requests} requests in ${m.elapsedS.toFixed(1)} s${m.notes.length ? `; ${m.notes.join('; ')}` : ''}${warmupFailures}`);
      if (m.sample) console.log(`  ${pad('', 30)}answers: ${m.sample}`);
    }
  }

  if (problems.length > 0) {
    console.error('');
    console.error('FAILED');
    for (const problem of problems) console.error(`  ${problem}`);
    return 1;
  }
  return 0;
}

withServiceNodeFlags();
main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
