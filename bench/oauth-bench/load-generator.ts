// The load generator of bench/oauth-vs-oidc-provider.ts, in a process of its own (as wrk would be:
// on a server's event loop it would take the CPU it measures). `concurrency` virtual clients
// each keep one request in flight over `concurrency` keep-alive connections (undici), for a
// bounded time (closed loop: the next request leaves when the previous answer has arrived).
//
//   code        each request redeems a fresh authorization code of the public client (PKCE)
//   refresh     each virtual client rotates its own refresh token: every answer's refresh_token
//               is the next request's (a chain per client, as a real app refreshes)
//   introspect  the confidential client (HTTP Basic) introspects its own access tokens, round robin
//
// Every answer is checked: 200 and the fields the grant must return (access_token, id_token,
// refresh_token), or `"active":true` for introspection. Anything else counts as a failure.
import { Pool } from 'undici';
import { serveRpc } from './rpc.js';
import type { BenchClient, IssuedCode, RunResult, RunSpec, Target } from './protocol.js';

interface Answer {
  readonly status: number;
  readonly body: string;
}

/** One connection pool per server: `concurrency` keep-alive connections, one request in flight on each. */
const pools = new Map<string, Pool>();
/** Refresh-token chains (one per virtual client) and access tokens to introspect, per target. */
const chains = new Map<string, (string | null)[]>();
const accessTokens = new Map<string, string[]>();

function poolFor(target: Target, concurrency: number): Pool {
  let pool = pools.get(target.baseUrl);
  if (!pool) {
    // undici rather than node:http: less than half the CPU per request (0.04 against 0.1 ms here),
    // and every cycle the load generator spends is taken from the two cores the server runs on.
    pool = new Pool(target.baseUrl, {
      connections: concurrency,
      pipelining: 1,
      keepAliveTimeout: 120_000,
      keepAliveMaxTimeout: 120_000,
      // A server that stops answering fails the run within half a minute instead of hanging it.
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
    });
    pools.set(target.baseUrl, pool);
  }
  return pool;
}

async function post(pool: Pool, path: string, body: string, authorization?: string): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
  if (authorization) headers.authorization = authorization;
  const res = await pool.request({ method: 'POST', path, headers, body });
  return { status: res.statusCode, body: await res.body.text() };
}

/** RFC 6749 §2.3.1: id and secret are form-encoded, then Basic-encoded. */
function basic(client: BenchClient): string {
  const encode = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${encode(client.clientId)}:${encode(client.clientSecret ?? '')}`).toString('base64')}`;
}

function form(fields: Record<string, string>): string {
  return new URLSearchParams(fields).toString();
}

/** The token request redeeming `code` (public: client_id + PKCE; confidential: Basic as well). */
function codeRequest(client: BenchClient, code: IssuedCode): { body: string; authorization?: string } {
  const fields: Record<string, string> = {
    grant_type: 'authorization_code',
    code: code.code,
    redirect_uri: client.redirectUri,
    code_verifier: code.verifier,
  };
  if (client.clientSecret === null) return { body: form({ ...fields, client_id: client.clientId }) };
  return { body: form(fields), authorization: basic(client) };
}

/** Why a token answer is not the one the grant must give, or null when it is. */
function tokenAnswerProblem(answer: Answer): string | null {
  if (answer.status !== 200) return `${answer.status}`;
  for (const field of ['"access_token"', '"id_token"', '"refresh_token"']) {
    if (!answer.body.includes(field)) return `200 without ${field.slice(1, -1)}`;
  }
  return null;
}

interface Tally {
  ok: number;
  sample: string | null;
  failures: Map<string, number>;
  samples: string[];
}

function fail(tally: Tally, reason: string, answer: Answer | null, error?: unknown): void {
  tally.failures.set(reason, (tally.failures.get(reason) ?? 0) + 1);
  if (tally.samples.length < 3) tally.samples.push(answer ? `${answer.status} ${answer.body.slice(0, 300)}` : String(error));
}

function succeed(tally: Tally, answer: Answer): void {
  tally.ok++;
  tally.sample ??= answer.body;
}

/** Exchanges codes outside any measured window: the refresh chains and the tokens to introspect. */
async function redeem(target: Target, client: BenchClient, codes: readonly IssuedCode[], concurrency: number): Promise<Record<string, unknown>[]> {
  const pool = poolFor(target, concurrency);
  const results: Record<string, unknown>[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, codes.length) }, async () => {
      while (next < codes.length) {
        const { body, authorization } = codeRequest(client, codes[next++]!);
        const answer = await post(pool, target.tokenPath, body, authorization);
        const problem = tokenAnswerProblem(answer);
        if (problem) throw new Error(`${target.name}: code exchange for ${client.clientId} failed (${problem}): ${answer.body.slice(0, 500)}`);
        results.push(JSON.parse(answer.body) as Record<string, unknown>);
      }
    }),
  );
  return results;
}

async function run(spec: RunSpec): Promise<RunResult> {
  const { target, phase, concurrency } = spec;
  const pool = poolFor(target, concurrency);
  const tally: Tally = { ok: 0, sample: null, failures: new Map(), samples: [] };
  const latencies: number[] = [];
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const until = started + spec.durationMs;
  let exhaustedAfterMs: number | null = null;

  const timed = async (request: () => Promise<Answer>): Promise<Answer | null> => {
    const t0 = performance.now();
    try {
      const answer = await request();
      if (spec.measure) latencies.push(performance.now() - t0);
      return answer;
    } catch (error) {
      fail(tally, 'network error', null, error);
      return null;
    }
  };

  let worker: (index: number) => Promise<void>;
  if (phase === 'code') {
    const codes = spec.codes ?? [];
    const client = target.clients.public;
    let next = 0;
    worker = async () => {
      while (performance.now() < until) {
        if (next >= codes.length) {
          exhaustedAfterMs ??= performance.now() - started;
          return;
        }
        const { body, authorization } = codeRequest(client, codes[next++]!);
        const answer = await timed(() => post(pool, target.tokenPath, body, authorization));
        if (!answer) continue;
        const problem = tokenAnswerProblem(answer);
        if (problem) fail(tally, problem, answer);
        else succeed(tally, answer);
      }
    };
  } else if (phase === 'refresh') {
    const tokens = chains.get(target.name) ?? [];
    const client = target.clients.public;
    worker = async (index) => {
      while (performance.now() < until && tokens[index]) {
        const body = form({ grant_type: 'refresh_token', refresh_token: tokens[index]!, client_id: client.clientId });
        const answer = await timed(() => post(pool, target.tokenPath, body));
        const problem = answer ? tokenAnswerProblem(answer) : 'network error';
        if (problem) {
          // The chain is broken (the token may or may not have been spent): this client stops.
          if (answer) fail(tally, problem, answer);
          tokens[index] = null;
          return;
        }
        tokens[index] = (JSON.parse(answer!.body) as { refresh_token: string }).refresh_token;
        succeed(tally, answer!);
      }
    };
  } else {
    const tokens = accessTokens.get(target.name) ?? [];
    const client = target.clients.confidential;
    const authorization = basic(client);
    let next = 0;
    worker = async () => {
      while (performance.now() < until) {
        const body = form({ token: tokens[next++ % tokens.length]!, token_type_hint: 'access_token' });
        const answer = await timed(() => post(pool, target.introspectPath, body, authorization));
        if (!answer) continue;
        if (answer.status !== 200) fail(tally, `${answer.status}`, answer);
        else if (!answer.body.includes('"active":true')) fail(tally, '200 but not active', answer);
        else succeed(tally, answer);
      }
    };
  }

  await Promise.all(Array.from({ length: concurrency }, (_, i) => worker(i)));
  const elapsedMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  return {
    ok: tally.ok,
    failures: Object.fromEntries(tally.failures),
    failureSamples: tally.samples,
    latencies,
    elapsedMs,
    exhaustedAfterMs,
    sample: tally.sample,
    generatorCpuMicros: cpu.user + cpu.system,
  };
}

serveRpc({
  /** Starts one refresh-token chain per code (public client). Returns how many chains there are. */
  async startChains({ target, codes, concurrency }: { target: Target; codes: IssuedCode[]; concurrency: number }): Promise<number> {
    const answers = await redeem(target, target.clients.public, codes, concurrency);
    chains.set(target.name, answers.map((a) => a.refresh_token as string));
    return answers.length;
  },

  /** Redeems the confidential client's codes; their access tokens are what introspection introspects. */
  async collectAccessTokens({ target, codes, concurrency }: { target: Target; codes: IssuedCode[]; concurrency: number }): Promise<string[]> {
    const answers = await redeem(target, target.clients.confidential, codes, concurrency);
    const tokens = answers.map((a) => a.access_token as string);
    accessTokens.set(target.name, tokens);
    return tokens;
  },

  /** How many refresh chains are still unbroken. */
  async liveChains({ target }: { target: Target }): Promise<number> {
    return (chains.get(target.name) ?? []).filter((t) => t !== null).length;
  },

  async run(spec: RunSpec): Promise<RunResult> {
    return run(spec);
  },

  async stop(): Promise<void> {
    await Promise.all([...pools.values()].map((pool) => pool.destroy()));
    setImmediate(() => process.exit(0));
  },
});
