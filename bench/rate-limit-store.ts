// The cost of counting rate limits in PostgreSQL (shared by every instance) beside counting in
// memory: `npx tsx bench/rate-limit-store.ts [--takes 5000] [--seconds 10] [--concurrency 16]`.
//
//  1. One limiter take at a time (what a request waits for), p50 / p99 / mean in µs, memory
//     store, then the PostgreSQL store (embedded PostgreSQL, or DATABASE_URL's server), then Redis
//     (REDIS_URL, default the local server) when one answers, and the differences. Target: the shared store adds under 0.5 ms at p99.
//  2. The organization API's throughput (GET /api/v1/org/facilities with an API key, `concurrency`
//     requests in flight for `seconds`) on one gateway counting in memory and one counting in
//     PostgreSQL, in the same run, and the ratio.
import http from 'node:http';
import os from 'node:os';
import { createKnex } from '../shared/db/knex.js';
import { ORG_API_RATE_LIMIT, RateLimiter, type RateLimitPolicy } from '../shared/http/rate-limit.js';
import { Redis } from 'ioredis';
import { memoryRateLimitStore, postgresRateLimitStore, redisRateLimitStore, type RateLimitStore } from '../shared/http/rate-limit-store.js';
import { createLogger } from '../shared/logger.js';
import { startStack, type Server } from '../test/support/stack.js';
import { databaseKind, stopTestDatabases } from '../test/support/database.js';
import { integerOption } from './command-line-options.js';
import { percentile } from './percentile.js';
import { runThenExit } from './run-then-exit.js';

const TAKES = integerOption('takes', 5000);
const SECONDS = integerOption('seconds', 10);
const CONCURRENCY = integerOption('concurrency', 16);
// Never reached: the bench measures the counting, not the refusals.
const OPEN: RateLimitPolicy = { ...ORG_API_RATE_LIMIT, points: 1_000_000_000, abuseThreshold: 1_000_000_000 };

async function takeLatencies(store: RateLimitStore): Promise<number[]> {
  const limiter = new RateLimiter(`bench-${Math.random().toString(36).slice(2)}`, OPEN, store);
  for (let i = 0; i < 200; i++) await limiter.take(`warm-${i % 50}`);
  const times: number[] = [];
  for (let i = 0; i < TAKES; i++) {
    // 1,000 sources, as a busy gateway sees.
    const started = process.hrtime.bigint();
    await limiter.take(`203.0.113.${i % 250}:${i % 4}`);
    times.push(Number(process.hrtime.bigint() - started) / 1000);
  }
  return times.sort((a, b) => a - b);
}

async function throughput(server: Server, apiKey: string): Promise<{ perSecond: number; p99: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const url = new URL('/api/v1/org/facilities', server.baseUrl);
  const get = () =>
    new Promise<number>((resolve, reject) => {
      const started = performance.now();
      http
        .get(url, { agent, headers: { Authorization: `Bearer ${apiKey}` } }, (res) => {
          res.resume();
          res.on('end', () => (res.statusCode === 200 ? resolve(performance.now() - started) : reject(new Error(`status ${res.statusCode}`))));
        })
        .on('error', reject);
    });
  for (let i = 0; i < 200; i++) await get();
  const deadline = performance.now() + SECONDS * 1000;
  const times: number[] = [];
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < deadline) times.push(await get());
    }),
  );
  agent.destroy();
  times.sort((a, b) => a - b);
  return { perSecond: times.length / SECONDS, p99: percentile(times, 99) };
}

async function main(): Promise<void> {
  console.log(`rate-limit store bench on ${databaseKind()} PostgreSQL, ${os.cpus().length} cores, node ${process.version}`);
  const stack = await startStack({ label: 'bench_rate_limit' });
  const tenant = await stack.seed.tenant({ scopes: ['org:facilities:read'] });
  const pool = createKnex(stack.databaseUrl, { max: 10 });
  const log = createLogger('warn', 'bench');

  const memory = await takeLatencies(memoryRateLimitStore());
  const shared = await takeLatencies(postgresRateLimitStore(pool, { log }));
  const row = (name: string, t: number[]) =>
    console.log(`${name.padEnd(22)} p50 ${percentile(t, 50).toFixed(0).padStart(6)} µs   p99 ${percentile(t, 99).toFixed(0).padStart(6)} µs   mean ${(t.reduce((a, b) => a + b, 0) / t.length).toFixed(0).padStart(6)} µs`);
  console.log(`\none take at a time, ${TAKES} takes`);
  row('memory', memory);
  row('PostgreSQL (shared)', shared);
  const added = (name: string, t: number[]) => {
    const p99 = (percentile(t, 99) - percentile(memory, 99)) / 1000;
    console.log(`added by ${name}: p50 ${((percentile(t, 50) - percentile(memory, 50)) / 1000).toFixed(3)} ms, p99 ${p99.toFixed(3)} ms (target < 0.5 ms at p99) ${p99 < 0.5 ? 'MET' : 'MISSED'}`);
  };
  added('PostgreSQL', shared);
  // Redis (REDIS_URL, default the local server) when one answers.
  const redis = new Redis(process.env.REDIS_URL?.trim() || 'redis://127.0.0.1:6379', { enableOfflineQueue: false, lazyConnect: true, keyPrefix: `bench${Date.now()}:` });
  const redisUp = await redis.connect().then(
    () => true,
    () => false,
  );
  if (redisUp) {
    const inRedis = await takeLatencies(redisRateLimitStore(redis, { log }));
    row('Redis (shared)', inRedis);
    added('Redis', inRedis);
  } else console.log('Redis (shared)         not reachable: skipped');
  redis.disconnect();

  const inMemory = await stack.serve({ rateLimit: OPEN });
  const inPostgres = await stack.serve({ rateLimit: OPEN, rateLimitStore: postgresRateLimitStore(pool, { log }) });
  const a = await throughput(inMemory, tenant.apiKey);
  const b = await throughput(inPostgres, tenant.apiKey);
  console.log(`\norganization API (GET /api/v1/org/facilities), ${CONCURRENCY} in flight for ${SECONDS} s each`);
  console.log(`counting in memory      ${a.perSecond.toFixed(0).padStart(6)} req/s   p99 ${a.p99.toFixed(1)} ms`);
  console.log(`counting in PostgreSQL  ${b.perSecond.toFixed(0).padStart(6)} req/s   p99 ${b.p99.toFixed(1)} ms`);
  console.log(`ratio shared / memory   ${(b.perSecond / a.perSecond).toFixed(2)}x`);

  await pool.destroy();
  await stack.stop();
  await stopTestDatabases();
}

runThenExit(main);
