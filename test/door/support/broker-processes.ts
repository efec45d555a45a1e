// Brokers the recovery tests may restart: a Mosquitto of their own (never the machine's). Kafka
// brokers of their own are test/support/private-kafka.ts.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { tcpReachable } from '../../support/components.js';

export function mosquittoBinary(): string | null {
  for (const dir of (process.env.PATH ?? '').split(':').concat(['/usr/sbin', '/usr/local/sbin'])) {
    const candidate = path.join(dir, 'mosquitto');
    if (dir && existsSync(candidate)) return candidate;
  }
  return null;
}

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A Mosquitto on a free loopback port without persistence: a restart loses every retained message and session. */
export class MosquittoInstance {
  private child: ChildProcess | null = null;

  private constructor(
    private readonly binary: string,
    private readonly dir: string,
    readonly port: number,
  ) {}

  get url(): string {
    return `mqtt://127.0.0.1:${this.port}`;
  }

  static async start(binary: string): Promise<MosquittoInstance> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'gp-mosquitto-'));
    const port = await freePort();
    await writeFile(path.join(dir, 'mosquitto.conf'), `listener ${port} 127.0.0.1\nallow_anonymous true\npersistence false\n`);
    const instance = new MosquittoInstance(binary, dir, port);
    await instance.launch();
    return instance;
  }

  private async launch(): Promise<void> {
    this.child = spawn(this.binary, ['-c', path.join(this.dir, 'mosquitto.conf')], { stdio: 'ignore' });
    await waitFor(() => tcpReachable('127.0.0.1', this.port, 200), 10_000, 'mosquitto to listen');
  }

  /** SIGKILL (a crash) and start again on the same port, after `downMs`. */
  async restart(downMs = 500): Promise<void> {
    await this.kill();
    await new Promise((resolve) => setTimeout(resolve, downMs));
    await this.launch();
  }

  async kill(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await exited;
  }

  async stop(): Promise<void> {
    await this.kill();
    await rm(this.dir, { recursive: true, force: true });
  }
}
