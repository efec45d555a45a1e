// A test that needs an external component fails loudly in CI when it is unreachable, and
// skips outside CI, saying what it skipped.
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';

export function tcpReachable(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** host:port of the first node of an esdb:// (or esdb+discover://) connection string, without credentials. */
export function eventStoreDbNode(connectionString: string): { host: string; port: number; tls: boolean } {
  const rest = connectionString.replace(/^[a-z+]+:\/\//i, '').replace(/^[^@/]*@/, '');
  const hosts = rest.split(/[/?]/)[0] ?? '';
  const [host, port] = (hosts.split(',')[0] ?? '').split(':');
  const tls = !/[?&]tls=false(&|$)/i.test(rest);
  return { host: host || 'localhost', port: Number(port) || 2113, tls };
}

/**
 * True once an EventStoreDB node answers its liveness endpoint (GET /health/live, 204 or 200).
 * Its TCP port accepts connections well before the node serves reads and writes, so a suite that
 * waited only for the port could start against a node still starting. With TLS the node's
 * certificate is not checked: this probe sends nothing and only asks whether the node is up.
 */
export async function eventStoreDbLive(connectionString: string, timeoutMs = 2000): Promise<boolean> {
  const { host, port, tls } = eventStoreDbNode(connectionString);
  const get = tls ? https.get : http.get;
  return new Promise((resolve) => {
    const request = get({ host, port, path: '/health/live', timeout: timeoutMs, ...(tls ? { rejectUnauthorized: false } : {}) }, (response) => {
      response.resume();
      resolve(response.statusCode === 204 || response.statusCode === 200);
    });
    request.on('timeout', () => request.destroy(new Error('timed out')));
    request.on('error', () => resolve(false));
  });
}

/** Polls eventStoreDbLive until it answers or `waitMs` has passed (a node that is starting takes a few seconds). */
export async function waitForEventStoreDb(connectionString: string, waitMs = 20_000): Promise<boolean> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    if (await eventStoreDbLive(connectionString)) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

export const inCI = process.env.CI === 'true' || process.env.CI === '1';

/** Call from a `before` hook: throws in CI, skips the suite elsewhere. */
export function requireComponent(context: Mocha.Context, name: string, reachable: boolean, how: string): void {
  if (reachable) return;
  if (inCI) throw new Error(`${name} is not reachable (${how}); CI requires it`);
  console.warn(`  skipping: ${name} is not reachable (${how})`);
  context.skip();
}
