// The production topology on one machine: every service as its own `node dist/<service>/main.js`
// process, configured only by the environment as docker-compose configures it, `instances` of
// the command service, the query service and the projections, one active door-gateway plus a
// standby when `instances` is 2, and nginx in front over https (deploy/gateway.nginx.conf).
// PostgreSQL, Kafka and the MQTT broker are given.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { freePort } from '../../../shared/db/embedded-postgres.js';
import { DOOR_EVENTS_TOPIC, PASS_EVENTS_TOPIC } from '../../../shared/pass-bus/pass-bus.js';
import { DOOR_GATEWAY_GROUP } from '../../../door-gateway/door-gateway.js';
import { DOOR_ACCESS_REACTOR_GROUP } from '../../../door-gateway/door-access-reactor.js';
import { NginxGateway, ROOT, type GatewayCertificate } from './nginx-gateway.js';
import { ServiceProcess, waitUntil } from './service-process.js';

const run = promisify(execFile);

export type ServiceKind = 'command-service' | 'query-service' | 'projections' | 'door-gateway';

/** What a door-gateway writes once it is the active one, and while it waits as the standby. */
const ACTIVE = /"msg":"door-gateway started"/;
const STANDBY = /waiting to be the active door-gateway/;

let build: Promise<void> | null = null;

/** `npm run build` once per test process: dist/ is then the code of this checkout. */
export function buildOnce(): Promise<void> {
  build ??= run('npm', ['run', 'build'], { cwd: ROOT, timeout: 600_000, maxBuffer: 16 * 1024 * 1024 }).then(
    () => undefined,
    (error: { stdout?: string; stderr?: string; message: string }) => {
      throw new Error(`npm run build failed:\n${(error.stdout ?? '').slice(-4000)}${(error.stderr ?? '').slice(-2000) || error.message}`);
    },
  );
  return build;
}

/**
 * The door-gateway's consumer groups start from the end of their topics. The services' topics
 * have fixed names, so the machine's broker holds other runs' pass events (other databases,
 * whose facility and pass ids this run reuses): this run's gateway must see its own only.
 */
export async function startDoorGroupsAtTopicEnd(brokers: readonly string[], timeoutMs = 30_000): Promise<void> {
  const admin = new Kafka({ clientId: 'guestpass-topology-test', brokers: [...brokers], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    for (const [groupId, topic] of [
      [DOOR_GATEWAY_GROUP, PASS_EVENTS_TOPIC],
      [DOOR_ACCESS_REACTOR_GROUP, DOOR_EVENTS_TOPIC],
    ] as const) {
      if (!existing.has(topic)) continue; // created by this run's forwarder: it holds only this run's events
      const partitions = (await admin.fetchTopicOffsets(topic)).map((p) => ({ partition: p.partition, offset: p.high }));
      // A member of an earlier run that was killed holds the group until its session times out.
      await waitUntil(
        () =>
          admin.setOffsets({ groupId, topic, partitions }).then(
            () => true,
            (error: Error) => `${groupId}: ${error.message}`,
          ),
        timeoutMs,
        `the consumer group ${groupId} to be empty, to move it to the end of ${topic}`,
        1000,
      );
    }
  } finally {
    await admin.disconnect();
  }
}

export interface TopologyOptions {
  /** Instances of the command service, the query service and the projections (2: and a standby door-gateway). */
  readonly instances: 1 | 2;
  readonly databaseUrl: string;
  /** The door path (Kafka, MQTT, the door-gateways); null: the HTTP services and projections only. */
  readonly door: { readonly kafkaBrokers: readonly string[]; readonly mqttUrl: string } | null;
  readonly nginxBinary: string;
  readonly certificate: GatewayCertificate;
  /** The run's folder: data folders of the services, the gateway's files. */
  readonly dir: string;
  /** Where each process's log file goes. */
  readonly logDir: string;
  /** GATEWAY_TRUSTED_PROXIES of the gateway. */
  readonly trustedProxies?: readonly string[];
  /** Added to (or overriding) every service's environment. */
  readonly env?: Readonly<Record<string, string>>;
  /** Start-up deadline of each process (default 60 s: a busy machine takes long to load the modules). */
  readonly startTimeoutMs?: number;
  /** Each process gets OPS_PORT: /healthz, /readyz and /metrics there, its API port open only once ready. */
  readonly opsPorts?: boolean;
}

export class ServiceInstance {
  constructor(
    readonly kind: ServiceKind,
    readonly process: ServiceProcess,
    /** Its HTTP port: the API of the command and query services; /healthz, /readyz and /metrics of every process. */
    readonly port: number,
    private readonly timeoutMs: number,
    /** Its operators' port (OPS_PORT), when it has one. */
    readonly opsPort: number | null = null,
  ) {}

  /** Where its /healthz, /readyz and /metrics answer. */
  get opsUrl(): string {
    return `http://127.0.0.1:${this.opsPort ?? this.port}`;
  }

  get name(): string {
    return this.process.name;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Starts it and waits until it serves (a door-gateway: until it is active or a standby). */
  async start(options: { standby?: boolean } = {}): Promise<void> {
    this.process.start();
    await this.ready(options);
  }

  /** Waits until it is ready (/readyz 200), or for a standby door-gateway, until it waits for its turn. */
  async ready(options: { standby?: boolean; timeoutMs?: number } = {}): Promise<void> {
    if (options.standby) return this.process.waitFor(STANDBY, options.timeoutMs ?? this.timeoutMs, 'waiting as the standby');
    await waitUntil(
      async () => {
        if (!this.process.running) throw new Error(`${this.name} exited while starting:\n${this.process.tail()}`);
        const status = await this.readyz();
        return status === 200 || `/readyz ${status}`;
      },
      options.timeoutMs ?? this.timeoutMs,
      () => `${this.name} to be ready on ${this.opsUrl} (its last lines:\n${this.process.tail(15)}\n)`,
      100,
    );
  }

  /** Its /readyz status, or the connection error. */
  async readyz(): Promise<number | string> {
    try {
      const res = await fetch(`${this.opsUrl}/readyz`, { signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      return res.status;
    } catch (error) {
      return String((error as Error).cause ?? error);
    }
  }

  /** True once this door-gateway has said it is the active one (this run). */
  isActive(): boolean {
    return this.kind === 'door-gateway' && ACTIVE.test(this.process.output());
  }

  /** SIGKILL, as a crash. */
  kill(): Promise<void> {
    return this.process.kill();
  }

  /** SIGTERM (SIGKILL after `graceMs`), as a deploy stops it. */
  stop(graceMs?: number): Promise<void> {
    return this.process.stop(graceMs);
  }
}

export class Topology {
  private constructor(
    readonly command: readonly ServiceInstance[],
    readonly query: readonly ServiceInstance[],
    readonly projections: readonly ServiceInstance[],
    readonly doorGateways: readonly ServiceInstance[],
    readonly gateway: NginxGateway,
    /** The environment every service runs with (secrets included), for the CLI. */
    readonly env: Readonly<Record<string, string>>,
  ) {}

  get url(): string {
    return this.gateway.url;
  }

  all(): ServiceInstance[] {
    return [...this.command, ...this.query, ...this.projections, ...this.doorGateways];
  }

  /** The door-gateway that says it is active, if one does. */
  activeDoorGateway(): ServiceInstance | undefined {
    return this.doorGateways.find((g) => g.process.running && g.isActive());
  }

  static async start(options: TopologyOptions): Promise<Topology> {
    const timeoutMs = options.startTimeoutMs ?? 60_000;
    const gatewayPort = await freePort();
    const publicBaseUrl = `https://127.0.0.1:${gatewayPort}`;
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? options.dir,
      NODE_ENV: 'production',
      // As the image runs them (Dockerfile).
      NODE_OPTIONS: '--max-semi-space-size=64',
      DATABASE_URL: options.databaseUrl,
      ...(options.door ? { KAFKA_BROKERS: options.door.kafkaBrokers.join(','), MQTT_URL: options.door.mqttUrl } : {}),
      PUBLIC_BASE_URL: publicBaseUrl,
      PAGE_CURSOR_SECRET: randomBytes(32).toString('base64url'),
      OAUTH_KEY_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      DATA_KEY_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      TRUST_PROXY: 'true',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      ...options.env,
    };
    await mkdir(options.logDir, { recursive: true });
    const instance = async (kind: ServiceKind, n: number): Promise<ServiceInstance> => {
      const name = `${kind}-${n}`;
      const port = await freePort();
      const opsPort = options.opsPorts ? await freePort() : null;
      const dataDir = path.join(options.dir, name);
      await mkdir(dataDir, { recursive: true });
      const proc = new ServiceProcess({
        name,
        command: process.execPath,
        args: [path.join(ROOT, 'dist', kind, 'main.js')],
        env: { ...env, GUESTPASS_DATA_DIR: dataDir, PORT: String(port), ...(opsPort !== null ? { OPS_PORT: String(opsPort) } : {}) },
        logFile: path.join(options.logDir, `${name}.log`),
      });
      return new ServiceInstance(kind, proc, port, timeoutMs, opsPort);
    };
    const count = options.instances;
    const command = await Promise.all(range(count).map((n) => instance('command-service', n)));
    const query = await Promise.all(range(count).map((n) => instance('query-service', n)));
    const projections = await Promise.all(range(count).map((n) => instance('projections', n)));
    const doorGateways = options.door ? await Promise.all(range(count).map((n) => instance('door-gateway', n))) : [];
    const started: ServiceInstance[] = [];
    const begin = async (i: ServiceInstance, standby = false) => {
      started.push(i);
      await i.start({ standby });
    };
    try {
      // The first of each migrator together, on the fresh database (their migrations take turns);
      // the query service never migrates: it starts once the first command service is ready.
      const first = [begin(projections[0]!), ...doorGateways.slice(0, 1).map((i) => begin(i))];
      await begin(command[0]!);
      await Promise.all([...first, ...query.map((i) => begin(i)), ...command.slice(1).map((i) => begin(i)), ...projections.slice(1).map((i) => begin(i))]);
      // The second door-gateway once the first is the active one: it waits as the standby.
      for (const standby of doorGateways.slice(1)) await begin(standby, true);
      const gateway = await NginxGateway.start({
        binary: options.nginxBinary,
        dir: path.join(options.dir, 'nginx'),
        logFile: path.join(options.logDir, 'nginx.log'),
        port: gatewayPort,
        certificate: options.certificate,
        commandUpstreams: command.map((i) => `127.0.0.1:${i.port}`),
        queryUpstreams: query.map((i) => `127.0.0.1:${i.port}`),
        trustedProxies: options.trustedProxies,
      });
      return new Topology(command, query, projections, doorGateways, gateway, env);
    } catch (error) {
      await Promise.all(started.map((i) => i.stop()));
      throw error;
    }
  }

  /** Stops every process (SIGTERM, SIGKILL after a grace period), the gateway last. */
  async stop(): Promise<void> {
    await Promise.all(this.all().map((i) => i.stop()));
    await this.gateway.stop();
  }
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i + 1);
}

