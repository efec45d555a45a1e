// Single-pass create through HTTP: `npx tsx bench/http-create-pass.ts [--seconds 15] [--concurrency 16] [--admins 1]`.
// Runs the real stack in-process (embedded PostgreSQL, or DATABASE_URL's server; PostgreSQL event
// store; projection runner; command and query apps behind the gateway on an ephemeral port) and
// drives POST /api/v1/org/passes with one organization API key, `concurrency` requests in flight
// for a bounded time. Every answer waits for the read models (read-your-writes), as in production.
// All passes of one admin in one month live on one stream (the allowance's consistency boundary),
// so one key's creates are appended one after another; `--admins N` spreads the load over N admins
// with a key each, to show what the stack does when that stream is not the limit.
// Targets: at least 500 creates/s, p99 under 50 ms.
import http from 'node:http';
import os from 'node:os';
import { startStack, passBody } from '../test/support/stack.js';
import { stopTestDatabases, databaseKind } from '../test/support/database.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const value = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number`);
  return value;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

const SECONDS = arg('seconds', 15);
const CONCURRENCY = arg('concurrency', 16);
const ADMINS = arg('admins', 1);
const WARMUP_MS = 2000;

async function main(): Promise<void> {
  console.log(`starting the stack on ${databaseKind()} PostgreSQL ...`);
  const stack = await startStack({ label: 'bench_create' });
  // The admin's monthly allowance is set far above what the run can create.
  const orgId = await stack.seed.organization({ inviteAllowance: 1_000_000 });
  const facilityId = await stack.seed.facility(orgId);
  const apiKeys: string[] = [];
  for (let i = 0; i < ADMINS; i++) {
    const userId = await stack.seed.admin(orgId, { inviteAllowance: 1_000_000 });
    apiKeys.push((await stack.seed.apiKey(orgId, userId, { scopes: ['org:passes:write'] })).apiKey);
  }

  const url = new URL('/api/v1/org/passes', stack.baseUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const body = JSON.stringify(passBody(facilityId, { first_name: 'Bench', email: 'bench@example.com' }));
  const create = (apiKey: string) =>
    new Promise<number>((resolve, reject) => {
      const req = http.request(
        url,
        { method: 'POST', agent, headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end(body);
    });

  async function run(ms: number, latencies: number[] | null): Promise<{ ok: number; failed: Map<number, number> }> {
    const until = performance.now() + ms;
    let ok = 0;
    const failed = new Map<number, number>();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async (_, worker) => {
        const apiKey = apiKeys[worker % apiKeys.length]!;
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
  console.log(`measuring for ${SECONDS} s at concurrency ${CONCURRENCY} ...`);
  const latencies: number[] = [];
  const started = performance.now();
  const { ok, failed } = await run(SECONDS * 1000, latencies);
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);

  const throughput = ok / elapsed;
  const p99 = percentile(latencies, 99);
  const ms = (v: number) => `${v.toFixed(1)} ms`;
  console.log('');
  console.log('single-pass create, POST /api/v1/org/passes (HTTP, in-process stack, read-your-writes)');
  console.log(`  requests      ${latencies.length} in ${elapsed.toFixed(1)} s, concurrency ${CONCURRENCY}, ${ADMINS} admin key(s)`);
  console.log(`  created       ${ok}${failed.size ? `, failed ${JSON.stringify(Object.fromEntries(failed))}` : ''}`);
  console.log(`  throughput    ${throughput.toFixed(0)} creates/s   (target >= 500/s: ${throughput >= 500 ? 'met' : 'NOT met'})`);
  console.log(`  latency       p50 ${ms(percentile(latencies, 50))}   p95 ${ms(percentile(latencies, 95))}   p99 ${ms(p99)}   max ${ms(latencies.at(-1) ?? NaN)}`);
  console.log(`  p99 target    < 50 ms: ${p99 < 50 ? 'met' : 'NOT met'}`);
  console.log(`  machine       ${os.cpus().length} cores, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} (other work on the machine skews the tail)`);

  agent.destroy();
  await stack.stop();
  await stopTestDatabases();
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    void stopTestDatabases().finally(() => process.exit(1));
  },
);
