// The pass page of a 10-pass batch: `npx tsx bench/pass-page.ts [--seconds 10] [--warmup 3] [--concurrency 4]`.
// Runs the real stack in-process (embedded PostgreSQL, or DATABASE_URL's server), makes one
// 10-pass batch through the organization API, and serves GET /p/{token} from two apps side by
// side on 127.0.0.1, both the service's app front with the pass page routes (the rate limit
// raised out of reach): one draws the 10 QR codes as SVG on every request, the other keeps the
// drawings in the bounded in-memory cache the service ships (qr-svg.ts). A load generator in its
// own process keeps `concurrency` keep-alive connections busy for a bounded time per variant.
// Targets: p99 < 20 ms and at least 500 pages/s. By default 4 requests are in flight: enough to
// keep both cores busy (about 500 pages/s), few enough that the p99 is the page's own time rather
// than a queue's (at 10 in flight the same throughput waits about twice as long in line).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { startStack, type Stack } from '../test/support/stack.js';
import { stopTestDatabases, databaseKind } from '../test/support/database.js';
import { createBatch } from '../test/pass-page/support/pass-batch-fixtures.js';
import { createServiceApp } from '../shared/http/service-app.js';
import { passPageRoutes } from '../command-service/pass-page/pass-page-routes.js';
import { QrSvgCache } from '../command-service/pass-page/qr-svg.js';
import { percentile } from './percentile.js';
import { numberOption } from './command-line-options.js';
import { withServiceNodeFlags } from './service-node-flags.js';

const SECONDS = numberOption('seconds', 10);
const CONCURRENCY = numberOption('concurrency', 4);
const WARMUP_MS = numberOption('warmup', 3) * 1000;
const PASSES = 10;

interface Variant {
  readonly name: string;
  readonly baseUrl: string;
}

interface VariantResult {
  readonly name: string;
  readonly ok: number;
  readonly failed: Array<[number, number]>;
  readonly latencies: number[];
  readonly elapsedMs: number;
}

async function serveVariant(stack: Stack, qrCache: QrSvgCache | null): Promise<{ baseUrl: string; server: http.Server }> {
  const app = createServiceApp({ logger: stack.logger, trustProxy: false });
  const deps = { ...stack.deps, logger: stack.logger, config: { trustProxy: false }, oauth: stack.oauth };
  app.use(passPageRoutes(deps, { trustProxy: false, rateLimit: { points: 1e9, abuseThreshold: 1e9 }, qrCache }).routes());
  const server = http.createServer(app.callback());
  server.keepAliveTimeout = 10_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

async function main(): Promise<void> {
  console.log(`starting the stack on ${databaseKind()} PostgreSQL ...`);
  const stack = await startStack({ label: 'bench_pass_page' });
  const tenant = await stack.seed.tenant();
  const batch = await createBatch(stack, tenant, { quantity: PASSES, first_name: 'Bench', invited_by: 'Reception' });
  const cache = new QrSvgCache();
  const perRequest = await serveVariant(stack, null);
  const cached = await serveVariant(stack, cache);
  const variants: Variant[] = [
    { name: 'SVG drawn per request', baseUrl: perRequest.baseUrl },
    { name: 'SVG from the bounded cache (shipped)', baseUrl: cached.baseUrl },
  ];
  for (const v of variants) {
    const res = await fetch(v.baseUrl + batch.path);
    const page = await res.text();
    const svgs = (page.match(/<svg\b/g) ?? []).length;
    if (res.status !== 200 || svgs !== PASSES) throw new Error(`${v.name}: status ${res.status}, ${svgs} QR codes`);
  }
  console.log(`one page: ${PASSES} passes, ${(Buffer.byteLength(await (await fetch(cached.baseUrl + batch.path)).text()) / 1024).toFixed(1)} KiB of HTML`);

  // The load generator runs in its own process, as wrk would.
  const child = fork(fileURLToPath(import.meta.url), ['--client', '--warmup', String(WARMUP_MS / 1000)], {
    execArgv: process.execArgv,
    env: { ...process.env, BENCH_SPEC: JSON.stringify({ variants, path: batch.path, concurrency: CONCURRENCY, seconds: SECONDS }) },
  });
  const cpu = new Map<string, number>();
  let cpuBefore: NodeJS.CpuUsage | null = null;
  const results = await new Promise<VariantResult[]>((resolve, reject) => {
    child.on('message', (m: { kind: 'start' | 'stop'; name?: string } | VariantResult[]) => {
      if (Array.isArray(m)) return resolve(m);
      if (m.kind === 'start') cpuBefore = process.cpuUsage();
      else {
        const used = process.cpuUsage(cpuBefore!);
        cpu.set(m.name!, (used.user + used.system) / 1e6);
      }
    });
    child.once('error', reject);
    child.once('exit', (code) => code !== 0 && reject(new Error(`load generator exited with ${code}`)));
  });

  console.log('');
  console.log(`GET /p/{token}, a ${PASSES}-pass batch, service in one process, ${CONCURRENCY} keep-alive clients from another, ${SECONDS} s per variant`);
  const ms = (v: number) => `${v.toFixed(1)} ms`.padStart(8);
  console.log(`  ${'variant'.padEnd(38)} ${'pages/s'.padStart(8)} ${'p50'.padStart(8)} ${'p95'.padStart(8)} ${'p99'.padStart(8)} ${'max'.padStart(8)}  ${'CPU/page'.padStart(9)}  targets (>= 500/s, p99 < 20 ms)`);
  for (const r of results) {
    r.latencies.sort((a, b) => a - b);
    const rate = r.ok / (r.elapsedMs / 1000);
    const p99 = percentile(r.latencies, 99);
    const cpuPerPage = ((cpu.get(r.name) ?? NaN) * 1000) / Math.max(1, r.latencies.length);
    const failed = r.failed.length > 0 ? `  failed ${JSON.stringify(Object.fromEntries(r.failed))}` : '';
    console.log(
      `  ${r.name.padEnd(38)} ${rate.toFixed(0).padStart(8)} ${ms(percentile(r.latencies, 50))} ${ms(percentile(r.latencies, 95))} ${ms(p99)} ${ms(r.latencies.at(-1) ?? NaN)}  ${`${cpuPerPage.toFixed(2)} ms`.padStart(9)}  ${rate >= 500 ? 'met' : 'NOT met'}, ${p99 < 20 ? 'met' : 'NOT met'}${failed}`,
    );
  }
  console.log(`  cache         ${cache.size} drawings held (at most ${cache.maxEntries}, each at most ${cache.ttlMs / 1000} s and never past its pass's window)`);
  console.log(`  CPU/page      of the service's process (the stack's own, PostgreSQL not counted)`);
  console.log(`  machine       ${os.cpus().length} cores, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} (other work on the machine skews the tail)`);

  for (const { server } of [perRequest, cached]) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  await stack.stop();
  await stopTestDatabases();
}

/** The load generator: per variant, a warm-up, then `concurrency` requests in flight for the measured time. */
async function client(): Promise<void> {
  const spec = JSON.parse(process.env.BENCH_SPEC!) as { variants: Variant[]; path: string; concurrency: number; seconds: number };
  const results: VariantResult[] = [];
  for (const variant of spec.variants) {
    const pool = new Pool(variant.baseUrl, { connections: spec.concurrency, pipelining: 1, headersTimeout: 30_000, bodyTimeout: 30_000 });
    const run = async (ms: number, latencies: number[] | null) => {
      const until = performance.now() + ms;
      let ok = 0;
      const failed = new Map<number, number>();
      await Promise.all(
        Array.from({ length: spec.concurrency }, async () => {
          while (performance.now() < until) {
            const started = performance.now();
            const res = await pool.request({ method: 'GET', path: spec.path, headers: { accept: 'text/html' } });
            await res.body.dump({ limit: Infinity });
            latencies?.push(performance.now() - started);
            if (res.statusCode === 200) ok++;
            else failed.set(res.statusCode, (failed.get(res.statusCode) ?? 0) + 1);
          }
        }),
      );
      return { ok, failed };
    };
    console.log(`${variant.name}: warming up for ${WARMUP_MS / 1000} s, measuring for ${spec.seconds} s ...`);
    await run(WARMUP_MS, null);
    const latencies: number[] = [];
    process.send!({ kind: 'start' });
    const started = performance.now();
    const { ok, failed } = await run(spec.seconds * 1000, latencies);
    const elapsedMs = performance.now() - started;
    process.send!({ kind: 'stop', name: variant.name });
    results.push({ name: variant.name, ok, failed: [...failed], latencies, elapsedMs });
    await pool.close();
  }
  process.send!(results, () => process.exit(0));
}

withServiceNodeFlags();
(process.argv.includes('--client') ? client() : main()).then(
  () => process.argv.includes('--client') || process.exit(process.exitCode ?? 0),
  (error: unknown) => {
    console.error(error);
    void stopTestDatabases().finally(() => process.exit(1));
  },
);
