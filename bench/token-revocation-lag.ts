// Revocation lag on the read side: `npx tsx bench/token-revocation-lag.ts [--runs 200] [--pollers 1]`.
//
// The real stack in-process (embedded PostgreSQL, or DATABASE_URL's server; the PostgreSQL event
// store; the projection runner). For each run: a token family is started and an access token of it
// minted; pollers send GET /api/v1/passes?limit=1 with it back to back through the query
// service's user routes (each poller one request at a time; more pollers give finer resolution,
// but they share the process and the cores with the projection runner they measure, so on a
// small machine one is the truest); then TokenFamilyRevoked is appended through
// stack.deps.handler. The lag is the time from
// the append being acknowledged to the first 401 received. A 401 seen before the acknowledgement
// counts as 0 ms. Also printed: the lag counted from the start of the append call, and the mean
// poll round trip (the resolution of the measurement).
//
// The pollers go to the same userRoutes the query app mounts (same read-model revocation check),
// behind the embedded gateway, with the per-user rate limit lifted: at full speed one user sends
// far more than 120 requests a minute, and a 429 is not what is measured here.
import http from 'node:http';
import os from 'node:os';
import { startStack } from '../test/support/stack.js';
import { stopTestDatabases, databaseKind } from '../test/support/database.js';
import { oauthStreams } from '../shared/oauth/oauth-events.js';
import { tokenFamilyDecider } from '../shared/oauth/token-family-decider.js';
import { accessToken, operator, serveUserApi, signedInUser, startFamily, userTenant } from '../test/user-api/user-api-fixtures.js';
import { percentile } from './percentile.js';
import { integerOption } from './command-line-options.js';
import { runThenExit } from './run-then-exit.js';
import { withServiceNodeFlags } from './service-node-flags.js';

const RUNS = integerOption('runs', 200);
const POLLERS = integerOption('pollers', 1);
const WARM_UP_RUNS = 10;
/** A run that has not seen the 401 by then is a failure, not a slow sample. */
const RUN_TIMEOUT_MS = 10_000;

async function main(): Promise<void> {
  console.log(`starting the stack on ${databaseKind()} PostgreSQL ...`);
  const stack = await startStack({ label: 'bench_revocation_lag' });
  const server = await serveUserApi(stack, { points: 1_000_000_000, abuseThreshold: 1_000_000_000 });
  const tenant = await userTenant(stack);
  const user = await signedInUser(stack, tenant, { scopes: ['passes:read'] });

  const agent = new http.Agent({ keepAlive: true, maxSockets: POLLERS });
  const get = (token: string) =>
    new Promise<number>((resolve, reject) => {
      const req = http.request(new URL('/api/v1/passes?limit=1', server.baseUrl), { agent, headers: { Authorization: `Bearer ${token}` } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end();
    });

  let polls = 0;
  let pollMs = 0;
  async function run(): Promise<{ fromAck: number; fromCall: number; early: boolean }> {
    const familyId = await startFamily(stack, { ...tenant, userId: user.userId, scopes: ['passes:read'] });
    const token = await accessToken(stack, { userId: user.userId, clientId: tenant.clientId, scopes: ['passes:read'], familyId });
    const first = await get(token);
    if (first !== 200) throw new Error(`a fresh token got ${first}`);

    let seenAt: number | null = null;
    let failure: Error | null = null;
    const deadline = performance.now() + RUN_TIMEOUT_MS;
    const pollers = Array.from({ length: POLLERS }, async () => {
      while (seenAt === null && failure === null) {
        const started = performance.now();
        const status = await get(token);
        const now = performance.now();
        polls++;
        pollMs += now - started;
        if (status === 401) seenAt ??= now;
        else if (status !== 200) failure = new Error(`unexpected status ${status}`);
        else if (now > deadline) failure = new Error(`no 401 within ${RUN_TIMEOUT_MS} ms of the revocation`);
      }
    });
    // Let every poller have a request in flight before the revocation.
    await new Promise((resolve) => setTimeout(resolve, 5));
    const called = performance.now();
    await stack.deps.handler.handle(oauthStreams.tokenFamily(familyId), tokenFamilyDecider, { type: 'RevokeTokenFamily', data: { familyId, reason: 'revoked_by_user' } }, operator());
    const acknowledged = performance.now();
    await Promise.all(pollers);
    if (failure) throw failure;
    const at = seenAt!;
    return { fromAck: Math.max(0, at - acknowledged), fromCall: at - called, early: at < acknowledged };
  }

  console.log(`${WARM_UP_RUNS} warm-up runs, then ${RUNS} measured runs, ${POLLERS} pollers each ...`);
  for (let i = 0; i < WARM_UP_RUNS; i++) await run();
  polls = 0;
  pollMs = 0;
  const fromAck: number[] = [];
  const fromCall: number[] = [];
  let early = 0;
  for (let i = 0; i < RUNS; i++) {
    const r = await run();
    fromAck.push(r.fromAck);
    fromCall.push(r.fromCall);
    if (r.early) early++;
  }
  fromAck.sort((a, b) => a - b);
  fromCall.sort((a, b) => a - b);

  const ms = (v: number) => `${v.toFixed(2)}ms`.padStart(9);
  const row = (name: string, sorted: number[]) =>
    console.log(`  ${name.padEnd(36)} ${ms(percentile(sorted, 50))} ${ms(percentile(sorted, 95))} ${ms(percentile(sorted, 99))} ${ms(sorted.at(-1) ?? NaN)}`);
  console.log('');
  console.log(`TokenFamilyRevoked -> first 401 from GET /api/v1/passes (query service, revoked_token_families read model), ${RUNS} runs`);
  console.log(`  ${'measured from'.padEnd(36)} ${'p50'.padStart(9)} ${'p95'.padStart(9)} ${'p99'.padStart(9)} ${'max'.padStart(9)}`);
  row('append acknowledged', fromAck);
  row('append called', fromCall);
  console.log(`  401 seen before the append was acknowledged: ${early} of ${RUNS} runs (counted as 0 ms above)`);
  console.log(`  polling: ${POLLERS} pollers, ${polls.toLocaleString('en')} requests, mean round trip ${(pollMs / Math.max(1, polls)).toFixed(2)} ms (the resolution)`);
  console.log(`  machine: ${os.cpus().length} cores, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} (other work on the machine skews the tail)`);

  agent.destroy();
  await server.close();
  await stack.stop();
  await stopTestDatabases();
}

withServiceNodeFlags();
runThenExit(main);
