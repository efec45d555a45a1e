// A test that needs an external component fails loudly in CI when it is unreachable, and
// skips outside CI, saying what it skipped.
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

export const inCI = process.env.CI === 'true' || process.env.CI === '1';

/** Call from a `before` hook: throws in CI, skips the suite elsewhere. */
export function requireComponent(context: Mocha.Context, name: string, reachable: boolean, how: string): void {
  if (reachable) return;
  if (inCI) throw new Error(`${name} is not reachable (${how}); CI requires it`);
  console.warn(`  skipping: ${name} is not reachable (${how})`);
  context.skip();
}
