// What the bench's processes tell each other: a server under test describes itself (ServerInfo)
// and makes authorization codes on demand (IssuedCode); the load generator takes RunSpec jobs and
// answers RunResult. Both servers expose the same calls, so the parent treats them alike.
import { randomBytes } from 'node:crypto';

export type ClientKind = 'public' | 'confidential';

export interface BenchClient {
  readonly clientId: string;
  /** Null for the public client (PKCE only). */
  readonly clientSecret: string | null;
  readonly redirectUri: string;
}

export interface ServerInfo {
  /** Shown in the table. */
  readonly name: string;
  readonly baseUrl: string;
  readonly tokenPath: string;
  readonly introspectPath: string;
  readonly clients: Readonly<Record<ClientKind, BenchClient>>;
  /** Where the server keeps codes, grants and refresh tokens (printed with the results). */
  readonly storage: string;
  /** What the introspection phase introspects at this server (printed with the results). */
  readonly introspects: string;
  /** Whether its introspection verifies an RS256 signature (the floor applies) or only looks the token up. */
  readonly introspectionVerifies: boolean;
  /** The server process id, to tell its CPU apart from the rest of the machine. */
  readonly pid: number;
  /** The rate limits it ran at (ours: the shipped ones), printed with the results. */
  readonly limits: string;
}

export interface IssuedCode {
  readonly code: string;
  readonly verifier: string;
}

/** The calls both server children answer. */
export interface ServerCalls {
  start(): Promise<ServerInfo>;
  createCodes(params: { client: ClientKind; count: number }): Promise<IssuedCode[]>;
  /** Background work of the server (projections) has caught up. */
  settle(): Promise<void>;
  /** process.cpuUsage() of the server, user + system, in microseconds. */
  cpu(): Promise<number>;
  /** The PostgreSQL processes working for this server (its database's backends, the WAL writer); none for the peer. */
  postgresPids(): Promise<number[]>;
  stop(): Promise<void>;
}

export type Phase = 'code' | 'refresh' | 'introspect';

export interface Target {
  readonly name: string;
  readonly baseUrl: string;
  readonly tokenPath: string;
  readonly introspectPath: string;
  readonly clients: Readonly<Record<ClientKind, BenchClient>>;
}

export interface RunSpec {
  readonly target: Target;
  readonly phase: Phase;
  readonly concurrency: number;
  readonly durationMs: number;
  /** Record latencies (the measured window) or not (warm-up). */
  readonly measure: boolean;
  /** Code exchange: the codes this run may redeem, each once; the run ends early when they run out. */
  readonly codes?: readonly IssuedCode[];
}

export interface RunResult {
  readonly ok: number;
  /** `status` or `status: reason` -> count. */
  readonly failures: Record<string, number>;
  /** The first few failed answers, for the error message. */
  readonly failureSamples: readonly string[];
  /** Milliseconds, in completion order; empty when not measuring. */
  readonly latencies: number[];
  readonly elapsedMs: number;
  /** The run ended before durationMs because its codes ran out. */
  readonly exhaustedAfterMs: number | null;
  /** The body of the first correct answer (to show what the server issues), null if none. */
  readonly sample: string | null;
  /** CPU of the load generator during the run, microseconds. */
  readonly generatorCpuMicros: number;
}

/** A PKCE verifier (RFC 7636 §4.1: 43 characters here, 256 random bits). */
export function newVerifier(): string {
  return randomBytes(32).toString('base64url');
}

/** A session id of the shape SignInSession.sid requires (16+ characters of [A-Za-z0-9_-]). */
export function newSid(): string {
  return randomBytes(16).toString('base64url');
}

/** Runs `task` for 0..count-1 with at most `parallel` at a time; results in index order. */
export async function inParallel<T>(count: number, parallel: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const results = new Array<T>(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(parallel, count) }, async () => {
      while (next < count) {
        const i = next++;
        results[i] = await task(i);
      }
    }),
  );
  return results;
}
