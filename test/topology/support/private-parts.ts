// Private instances of the parts the services stand on, for tests that stop, kill or restart
// them: a PostgreSQL cluster and a Redis server, each on free loopback ports with its data in the
// test's folder. Never the machine's shared servers (5432, 9092, 6379, 1883). Kafka is
// test/support/private-kafka.ts's PrivateKafka, Mosquitto test/door/support/broker-processes.ts's
// MosquittoInstance.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { freePort, startEmbeddedPostgres, withDatabase, type EmbeddedServer } from '../../../shared/db/embedded-postgres.js';
import { tcpReachable } from '../../support/components.js';
import { sleep, waitUntil } from './service-process.js';

export function redisServerBinary(): string | null {
  for (const dir of (process.env.PATH ?? '').split(':').concat(['/usr/bin', '/usr/local/bin', '/usr/sbin'])) {
    const candidate = path.join(dir, 'redis-server');
    if (dir && existsSync(candidate)) return candidate;
  }
  return null;
}

async function exited(child: ChildProcess, timeoutMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
    }, timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** A PostgreSQL cluster of the test's own: stopped (fast shutdown), killed (SIGKILL, crash recovery on start), started on the same port. */
export class PrivatePostgres {
  private server: EmbeddedServer | null = null;

  private constructor(
    private readonly dataDir: string,
    readonly port: number,
  ) {}

  static async start(dir: string): Promise<PrivatePostgres> {
    const instance = new PrivatePostgres(path.join(dir, 'pg'), await freePort());
    await instance.start();
    return instance;
  }

  /** The URL of `database` on this server (created by createDatabase). */
  url(database: string): string {
    return withDatabase(`postgres://postgres:postgres@127.0.0.1:${this.port}/postgres`, database);
  }

  async createDatabase(name: string): Promise<string> {
    const admin = new pg.Client({ connectionString: this.url('postgres') });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${name}`);
    } finally {
      await admin.end();
    }
    return this.url(name);
  }

  /** Starts it (again); after a SIGKILL it runs crash recovery first, once the old backends are gone. */
  async start(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        this.server = await startEmbeddedPostgres({ dataDir: this.dataDir, port: this.port, persistent: true });
        return;
      } catch (error) {
        // The backends of a killed postmaster end on their own within moments; until then the old
        // shared memory is in use and a new postmaster refuses to start.
        if (attempt >= 10) throw error;
        await sleep(1000);
      }
    }
  }

  /** A fast shutdown (SIGINT): sessions end with 57P01. */
  async stop(): Promise<void> {
    await this.server?.stop();
    this.server = null;
  }

  /** SIGKILL of the postmaster, as a crash or the OOM killer: the next start recovers from the WAL. */
  async kill(): Promise<void> {
    const pid = Number((await readFile(path.join(this.dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
    process.kill(pid, 'SIGKILL');
    await waitUntil(() => !alive(pid), 10_000, `postmaster ${pid} to die`, 50);
    this.server = null;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A Redis server of the test's own, without persistence. */
export class PrivateRedis {
  private child: ChildProcess | null = null;

  private constructor(
    private readonly binary: string,
    private readonly dir: string,
    readonly port: number,
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(binary: string, dir: string): Promise<PrivateRedis> {
    const home = path.join(dir, 'redis');
    await mkdir(home, { recursive: true });
    const instance = new PrivateRedis(binary, home, await freePort());
    await instance.start();
    return instance;
  }

  async start(): Promise<void> {
    this.child = spawn(this.binary, ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', this.dir], { stdio: 'ignore' });
    await waitUntil(() => tcpReachable('127.0.0.1', this.port, 200), 10_000, `the private Redis on ${this.port} to listen`, 50);
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null) return;
    child.kill('SIGTERM');
    await exited(child, 10_000);
  }
}
