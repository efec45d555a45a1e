// Private instances of the parts the services stand on, for tests that stop, kill or restart
// them: a PostgreSQL cluster, an Apache Kafka broker (KRaft, one node, the CI broker's jars and
// settings on ports of its own), and a Redis server, each on free loopback ports with its data in
// the test's folder. Never the machine's shared servers (5432, 9092, 6379, 1883). Mosquitto is
// test/door/support/broker-processes.ts's MosquittoInstance.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, statSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort, startEmbeddedPostgres, withDatabase, type EmbeddedServer } from '../../../shared/db/embedded-postgres.js';
import { tcpReachable } from '../../support/components.js';
import { ROOT } from './nginx-gateway.js';
import { sleep, waitUntil } from './service-process.js';

const run = promisify(execFile);

/** The jars .ci/kafka/start.sh fetched (KAFKA_LIB_DIR names another folder). */
export function kafkaLibDir(): string | null {
  const dir = process.env.KAFKA_LIB_DIR?.trim() || path.join(ROOT, '.ci/kafka/lib');
  return existsSync(dir) && existsSync(path.join(dir, 'kafka_2.13-3.9.1.jar')) ? dir : null;
}

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

/** A free loopback port in 20000-29999 (outside Linux's ephemeral range, 32768-60999). */
async function freeFixedPort(): Promise<number> {
  const net = await import('node:net');
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 10_000);
    const free = await new Promise<boolean>((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error('no free port in 20000-29999');
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

/** An Apache Kafka broker of the test's own (the CI broker's version and settings, other ports and data). */
export class PrivateKafka {
  private child: ChildProcess | null = null;

  private constructor(
    private readonly dir: string,
    private readonly libDir: string,
    readonly port: number,
    private readonly logFile: string,
  ) {}

  get brokers(): string[] {
    return [`127.0.0.1:${this.port}`];
  }

  static async start(dir: string, libDir: string, logFile: string): Promise<PrivateKafka> {
    // Below the ephemeral range: the broker binds its ports long after they were found free (a
    // JVM start), and a port of that range may meanwhile be the source port of any connection.
    const [port, controllerPort] = [await freeFixedPort(), await freeFixedPort()];
    const home = path.join(dir, 'kafka');
    await mkdir(home, { recursive: true });
    const ci = readFileSync(path.join(ROOT, '.ci/kafka/server.properties'), 'utf8');
    const properties = ci
      .replace(/^controller\.quorum\.voters=.*$/m, `controller.quorum.voters=1@127.0.0.1:${controllerPort}`)
      .replace(/^listeners=.*$/m, `listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`)
      .replace(/^advertised\.listeners=.*$/m, `advertised.listeners=PLAINTEXT://127.0.0.1:${port}`)
      .replace(/^log\.dirs=.*$/m, `log.dirs=${path.join(home, 'logs')}`);
    await writeFile(path.join(home, 'server.properties'), properties);
    const instance = new PrivateKafka(home, libDir, port, logFile);
    const { stdout } = await run('java', ['-cp', `${libDir}/*`, 'kafka.tools.StorageTool', 'random-uuid'], { timeout: 60_000 });
    await run('java', ['-cp', `${libDir}/*`, 'kafka.tools.StorageTool', 'format', '-t', stdout.trim(), '-c', path.join(home, 'server.properties'), '--ignore-formatted'], {
      timeout: 60_000,
    });
    await instance.start();
    return instance;
  }

  /** Starts the broker (again, with its data) and waits until it serves. */
  async start(timeoutMs = 240_000): Promise<void> {
    const fd = openSync(this.logFile, 'a');
    const from = statSync(this.logFile).size;
    this.child = spawn(
      'java',
      ['-Xms128m', '-Xmx512m', '-XX:+UseG1GC', '-Djava.awt.headless=true', '-Dorg.slf4j.simpleLogger.defaultLogLevel=info', '-Dorg.slf4j.simpleLogger.log.org.apache.kafka.clients=warn', '-cp', `${this.libDir}/*`, 'kafka.Kafka', path.join(this.dir, 'server.properties')],
      { stdio: ['ignore', fd, fd] },
    );
    closeSync(fd);
    const child = this.child;
    await waitUntil(
      async () => {
        if (child.exitCode !== null) throw new Error(`the private Kafka broker exited while starting (log ${this.logFile})`);
        const log = readFileSync(this.logFile, 'utf8').slice(from);
        return log.includes('Kafka Server started') && (await tcpReachable('127.0.0.1', this.port, 500));
      },
      timeoutMs,
      `the private Kafka broker on ${this.port} to start (log ${this.logFile})`,
      250,
    );
  }

  /** A clean stop (SIGTERM; SIGKILL after 30 s). */
  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null) return;
    child.kill('SIGTERM');
    await exited(child, 30_000);
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
