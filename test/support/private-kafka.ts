// A Kafka broker of one test's or bench's own (KRaft, one JVM) on free loopback ports, which it may
// stop, kill and start as it likes: never the machine's shared broker on 127.0.0.1:9092. It runs
// the jars .ci/kafka/start.sh fetched (.ci/kafka/lib, or KAFKA_LIB_DIR) with the CI broker's
// settings, and keeps its data in a folder of its own across restarts (topics, committed offsets).
// The door tests, the door bench and the topology's fault test all use this one.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, createWriteStream, existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import net from 'node:net';
import { tcpReachable } from './components.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The folder of the Kafka jars, or null when .ci/kafka/start.sh has not fetched them. */
export function kafkaLibDir(): string | null {
  const dir = process.env.KAFKA_LIB_DIR?.trim() || path.join(root, '.ci/kafka/lib');
  try {
    return readdirSync(dir).some((f) => /^kafka_2\.13-.*\.jar$/.test(f)) ? dir : null;
  } catch {
    return null;
  }
}

export function javaBinary(): string | null {
  for (const dir of (process.env.PATH ?? '').split(':').concat(['/usr/bin'])) {
    if (dir && existsSync(path.join(dir, 'java'))) return path.join(dir, 'java');
  }
  return null;
}

/** Brokers still running: killed when this process exits, so none outlives its test or bench. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * A free loopback port in 20000-29999, below Linux's ephemeral range (32768-60999): the broker binds
 * its ports long after they were found free (a JVM start), and a port of that range may meanwhile
 * have become the source port of any outgoing connection.
 */
async function freeFixedPort(): Promise<number> {
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

const JAVA_OPTS = ['-Xms128m', '-Xmx512m', '-XX:+UseG1GC', '-Djava.awt.headless=true', '-Dorg.slf4j.simpleLogger.defaultLogLevel=info', '-Dorg.slf4j.simpleLogger.showDateTime=true'];

/**
 * 16 random bytes in base64url, as `StorageTool random-uuid` prints, and like Kafka's own never
 * starting with '-': the tool's argument parser would take such an id for an option (1 run in 64).
 */
function newClusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

export class PrivateKafka {
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();
  private launches = 0;

  private constructor(
    private readonly java: string,
    private readonly lib: string,
    readonly dir: string,
    readonly port: number,
    readonly logFile: string,
  ) {}

  /** `127.0.0.1:<port>` of the broker itself, for KAFKA_BROKERS (unless a proxy is advertised). */
  get broker(): string {
    return `127.0.0.1:${this.port}`;
  }

  /**
   * Formats a fresh KRaft log folder and starts the broker; resolves once it answers.
   * `advertisedPort`: the port clients are told to connect to (a proxy's in front of the broker,
   * see kafka-fault-proxy.ts); the broker's own port by default. `dir` and `logFile`: where its data
   * and log go (a temporary folder by default).
   */
  static async start(
    options: { startTimeoutMs?: number; advertisedPort?: number; dir?: string; logFile?: string } = {},
  ): Promise<PrivateKafka> {
    const java = javaBinary();
    const lib = kafkaLibDir();
    if (!java || !lib) throw new Error('a private Kafka broker needs java and the jars of .ci/kafka/start.sh (.ci/kafka/lib or KAFKA_LIB_DIR)');
    const dir = options.dir ? path.join(options.dir, 'kafka') : await mkdtemp(path.join(os.tmpdir(), 'gp-kafka-'));
    await mkdir(dir, { recursive: true });
    const [port, controllerPort] = [await freeFixedPort(), await freeFixedPort()];
    const ciSettings = await readFile(path.join(root, '.ci/kafka/server.properties'), 'utf8');
    const settings = ciSettings
      .replace(/^controller\.quorum\.voters=.*$/m, `controller.quorum.voters=1@127.0.0.1:${controllerPort}`)
      .replace(/^listeners=.*$/m, `listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`)
      .replace(/^advertised\.listeners=.*$/m, `advertised.listeners=PLAINTEXT://127.0.0.1:${options.advertisedPort ?? port}`)
      .replace(/^log\.dirs=.*$/m, `log.dirs=${path.join(dir, 'logs')}`)
      .replace(/^num\.(network|io)\.threads=.*$/gm, 'num.$1.threads=1');
    await writeFile(path.join(dir, 'server.properties'), settings);
    const kafka = new PrivateKafka(java, lib, dir, port, options.logFile ?? path.join(dir, 'kafka.log'));
    await kafka.run(['kafka.tools.StorageTool', 'format', '-t', newClusterId(), '-c', kafka.properties, '--ignore-formatted']);
    await kafka.launch(options.startTimeoutMs);
    return kafka;
  }

  private get properties(): string {
    return path.join(this.dir, 'server.properties');
  }

  private run(args: string[]): Promise<void> {
    return new Promise((resolve, reject) => {
      execFile(this.java, [...JAVA_OPTS, '-cp', `${this.lib}/*`, ...args], { timeout: 120_000 }, (error, _out, stderr) =>
        error ? reject(new Error(`${args[0]} failed: ${stderr || error.message}`)) : resolve(),
      );
    });
  }

  /** Starts the broker on its ports and data; resolves once it logged its start and accepts connections. */
  async launch(timeoutMs = 300_000): Promise<void> {
    if (this.child) throw new Error('the private Kafka broker is already running');
    this.launches++;
    const marker = `--- launch ${this.launches} ---\n`;
    appendFileSync(this.logFile, marker);
    const log = createWriteStream(this.logFile, { flags: 'a' });
    const child = spawn(this.java, [...JAVA_OPTS, '-cp', `${this.lib}/*`, 'kafka.Kafka', this.properties], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.pipe(log);
    child.stderr!.pipe(log);
    this.child = child;
    running.add(child);
    this.exited = new Promise((resolve) =>
      child.once('exit', () => {
        running.delete(child);
        resolve();
      }),
    );
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) {
        this.child = null;
        throw new Error(`the private Kafka broker exited while starting; see ${this.logFile}`);
      }
      const text = await readFile(this.logFile, 'utf8');
      if (text.slice(text.lastIndexOf(marker)).includes('Kafka Server started') && (await tcpReachable('127.0.0.1', this.port, 200))) return;
      if (Date.now() > deadline) throw new Error(`the private Kafka broker did not start within ${timeoutMs} ms; see ${this.logFile}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** Graceful stop (SIGTERM: controlled shutdown), SIGKILL after `timeoutMs`. */
  async stop(timeoutMs = 30_000): Promise<void> {
    const child = this.child;
    if (!child) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    await this.exited;
    clearTimeout(timer);
    this.child = null;
  }

  /** SIGKILL: the broker dies as in a crash (no controlled shutdown). */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child) return;
    child.kill('SIGKILL');
    await this.exited;
    this.child = null;
  }

  /** Stops the broker (gracefully unless `kill`), waits `downMs`, starts it again. */
  async restart(options: { downMs?: number; kill?: boolean } = {}): Promise<void> {
    await (options.kill ? this.kill() : this.stop());
    await new Promise((resolve) => setTimeout(resolve, options.downMs ?? 0));
    await this.launch();
  }

  /** Kills the broker and deletes its data. */
  async destroy(): Promise<void> {
    await this.kill();
    await rm(this.dir, { recursive: true, force: true });
  }
}
