// Knocks on a port every few milliseconds with a raw HTTP request (one connection each, a short
// client timeout) and sorts what came back: refused, a complete response (by status), reset, or
// left hanging. For the tests of what a process answers while it starts and stops.
import net from 'node:net';

export interface KnockReport {
  readonly total: number;
  readonly refused: number;
  /** Complete responses by status code. */
  readonly statuses: Readonly<Record<number, number>>;
  /** 503 answers without a Retry-After header. */
  readonly unavailableWithoutRetryAfter: number;
  /** Connections accepted and then dropped before a complete response. */
  readonly reset: number;
  /** Knocks with no complete response within the client timeout. */
  readonly hung: number;
  /** When the knocks left hanging began (ms after the first knock). */
  readonly hungAt: readonly number[];
  /** When the knocks that were reset began (ms after the first knock). */
  readonly resetAt: readonly number[];
  /** Every knock in the order they began: when (ms after the first) and its outcome (`refused`, `reset`, `hung` or the status). */
  readonly knocks: ReadonlyArray<{ readonly at: number; readonly outcome: string }>;
  /** Runs of like outcomes in knock order, `refused x12 @0-61ms, 503 x40 @66-270ms, ...`, for messages. */
  readonly timeline: string;
  /** A few examples of what went wrong, for the assertion message. */
  readonly examples: readonly string[];
}

export interface Knocker {
  /** Milliseconds since the first knock: to compare with the report's times. */
  now(): number;
  /** Resolves once a knock got a complete response with this status (or a non-503 one when omitted). */
  answered(predicate?: (status: number) => boolean): Promise<void>;
  /** Stops knocking and waits for the knocks under way. */
  stop(): Promise<KnockReport>;
}

type Outcome = { kind: 'refused' } | { kind: 'response'; status: number; retryAfter: boolean } | { kind: 'reset'; detail: string } | { kind: 'hung'; detail: string };
/** With when the knock began, in ms after the first one. */
type Timed = Outcome & { readonly at: number };

/** Parses a whole HTTP/1.1 response read until the server closed: null when it is incomplete. */
function completeResponse(raw: Buffer): { status: number; retryAfter: boolean } | null {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const head = raw.subarray(0, end).toString('latin1');
  const match = /^HTTP\/1\.[01] (\d{3}) /.exec(head);
  if (!match) return null;
  const headers = new Map<string, string>();
  for (const line of head.split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  const body = raw.subarray(end + 4);
  const length = headers.get('content-length');
  if (length !== undefined && body.length < Number(length)) return null;
  if (headers.get('transfer-encoding')?.includes('chunked') && !body.subarray(-5).equals(Buffer.from('0\r\n\r\n'))) return null;
  return { status: Number(match[1]), retryAfter: headers.has('retry-after') };
}

function knock(port: number, path: string, timeoutMs: number): Promise<Outcome> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    const chunks: Buffer[] = [];
    let connected = false;
    let settled = false;
    const settle = (outcome: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => settle({ kind: 'hung', detail: `${connected ? 'connected' : 'connecting'}, ${Buffer.concat(chunks).length} bytes after ${timeoutMs} ms` }), timeoutMs);
    socket.on('connect', () => {
      connected = true;
      socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`);
    });
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => {
      const response = completeResponse(Buffer.concat(chunks));
      settle(response ? { kind: 'response', ...response } : { kind: 'reset', detail: `closed after ${Buffer.concat(chunks).length} bytes` });
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNREFUSED') return settle({ kind: 'refused' });
      const response = completeResponse(Buffer.concat(chunks));
      settle(response ? { kind: 'response', ...response } : { kind: 'reset', detail: `${error.code ?? error.message} after ${Buffer.concat(chunks).length} bytes` });
    });
  });
}

export function startKnocking(port: number, path: string, options: { intervalMs?: number; timeoutMs?: number } = {}): Knocker {
  const { intervalMs = 5, timeoutMs = 3000 } = options;
  const outcomes: Timed[] = [];
  const first = Date.now();
  const underWay = new Set<Promise<void>>();
  const waiters: Array<{ predicate: (status: number) => boolean; resolve: () => void }> = [];
  const record = (outcome: Timed) => {
    outcomes.push(outcome);
    if (outcome.kind !== 'response') return;
    for (const waiter of waiters.splice(0)) {
      if (waiter.predicate(outcome.status)) waiter.resolve();
      else waiters.push(waiter);
    }
  };
  const timer = setInterval(() => {
    const at = Date.now() - first;
    const pending = knock(port, path, timeoutMs).then((outcome) => record({ ...outcome, at }));
    underWay.add(pending);
    void pending.finally(() => underWay.delete(pending));
  }, intervalMs);
  return {
    now: () => Date.now() - first,
    answered(predicate = (status) => status !== 503) {
      if (outcomes.some((o) => o.kind === 'response' && predicate(o.status))) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ predicate, resolve }));
    },
    async stop() {
      clearInterval(timer);
      await Promise.all([...underWay]);
      const statuses: Record<number, number> = {};
      const examples: string[] = [];
      const hungAt: number[] = [];
      const resetAt: number[] = [];
      let refused = 0;
      let reset = 0;
      let hung = 0;
      let unavailableWithoutRetryAfter = 0;
      for (const o of outcomes) {
        if (o.kind === 'refused') refused++;
        else if (o.kind === 'response') {
          statuses[o.status] = (statuses[o.status] ?? 0) + 1;
          if (o.status === 503 && !o.retryAfter) unavailableWithoutRetryAfter++;
        } else {
          if (o.kind === 'reset') {
            reset++;
            resetAt.push(o.at);
          } else {
            hung++;
            hungAt.push(o.at);
          }
          if (examples.length < 5) examples.push(`${o.kind} (knock ${o.at} ms after the first): ${o.detail}`);
        }
      }
      const label = (o: Timed) => (o.kind === 'response' ? String(o.status) : o.kind);
      const runs: Array<{ label: string; from: number; to: number; count: number }> = [];
      const knocks = [...outcomes].sort((a, b) => a.at - b.at).map((o) => ({ at: o.at, outcome: label(o) }));
      for (const o of [...outcomes].sort((a, b) => a.at - b.at)) {
        const last = runs.at(-1);
        if (last && last.label === label(o)) {
          last.to = o.at;
          last.count++;
        } else runs.push({ label: label(o), from: o.at, to: o.at, count: 1 });
      }
      const timeline = runs.map((r) => `${r.label} x${r.count} @${r.from}-${r.to}ms`).join(', ');
      return { total: outcomes.length, refused, statuses, unavailableWithoutRetryAfter, reset, hung, hungAt, resetAt, knocks, timeline, examples };
    },
  };
}
