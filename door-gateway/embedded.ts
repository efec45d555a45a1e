// The door path composed in one process, for `npm start` (the embedded default) and for tests:
//   forwarder -> pass bus -> door-gateway -> MQTT -> controllers -> door-gateway -> bus -> reactor
// With no KAFKA_BROKERS the bus is in-process; with no MQTT_URL an embedded aedes broker runs on
// loopback with one simulated controller per active facility, so a newcomer can create a pass and
// `guestpass door scan` it at once. With both set, the same pieces use the real brokers.
// The gateway and its reactor run as the door-gateway role (gateway-role.ts), as in the
// door-gateway process: a lost lock (the database gone and back) stops them, and they start again
// once this process holds it, without the process ending.
import type { Knex } from 'knex';
import type { Config } from '../shared/config.js';
import type { Logger } from '../shared/logger.js';
import type { EventStore } from '../shared/event-store/event-store.js';
import { createPassBus } from '../shared/pass-bus/create-pass-bus.js';
import type { PassBus } from '../shared/pass-bus/pass-bus.js';
import type { ReadinessCheck } from '../shared/http/readiness.js';
import { runPassEventForwarder, startForwarding } from '../projections/pass-event-forwarder-role.js';
import type { DoorGateway } from './door-gateway.js';
import { runDoorGatewayRole, type DoorGatewayRole } from './gateway-role.js';
import { startEmbeddedBroker, type EmbeddedBroker } from './embedded-broker.js';
import { ControllerSimulator } from './controller-simulator.js';

export interface DoorPathDeps {
  readonly store: EventStore;
  readonly knex: Knex;
  readonly config: Pick<Config, 'kafkaBrokers' | 'kafkaPassTopicPartitions' | 'mqttUrl' | 'dataDir'> & Partial<Pick<Config, 'kafkaTopicPrefix' | 'mqttTopicRoot'>>;
  readonly logger: Logger;
}

export interface DoorPathOptions {
  /** Run the pass event forwarder here (default true; false when the projections process runs it). */
  readonly forwarder?: boolean;
  /** Run the door access reactor here (default true; false when another process runs it). */
  readonly reactor?: boolean;
  /** Simulated controllers per facility (default 1 with the embedded broker, 0 with a real one). */
  readonly controllersPerFacility?: number;
  /** How often new facilities get simulated controllers (default 5 s). */
  readonly facilityPollMs?: number;
  readonly expirySweepMs?: number;
  /** How often the role asks for the lock after losing it, and its longest pause while the database is down (tests). */
  readonly lockPollMs?: number;
  readonly lockMaxRetryMs?: number;
  /** Write the embedded broker's URL into the data folder for the CLI (default true). */
  readonly recordBrokerUrl?: boolean;
}

export interface DoorPath {
  readonly bus: PassBus;
  /** The running gateway; null while this process waits for the active gateway's lock (after losing it). */
  readonly gateway: DoorGateway | null;
  /** The gateway and its reactor (and, on the in-process bus, the forwarder) as a leadership role. */
  readonly role: DoorGatewayRole;
  /** /readyz `mqtt`: fails while the role waits for its lock, and while the MQTT links are down. */
  readonly readinessCheck: ReadinessCheck;
  readonly broker: EmbeddedBroker | null;
  readonly mqttUrl: string;
  /** Simulated controllers by facility id. */
  readonly controllers: ReadonlyMap<number, readonly ControllerSimulator[]>;
  stop(): Promise<void>;
}

export async function startDoorPath(deps: DoorPathDeps, options: DoorPathOptions = {}): Promise<DoorPath> {
  const { config, logger } = deps;
  const log = logger.child({ component: 'door-path' });
  const stops: Array<() => Promise<void>> = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) {
      await stop().catch((error) => log.warn({ err: error }, 'door path: stop step failed'));
    }
  };
  try {
    let broker: EmbeddedBroker | null = null;
    let mqttUrl = config.mqttUrl;
    if (!mqttUrl) {
      broker = await startEmbeddedBroker(options.recordBrokerUrl === false ? {} : { dataDir: config.dataDir });
      stops.push(() => broker!.close());
      mqttUrl = broker.url;
      log.info({ url: mqttUrl }, 'embedded MQTT broker (aedes) started');
    }

    const bus = createPassBus(config, logger, 'guestpass-door-path');
    stops.push(() => bus.close());
    await bus.ensureTopics();

    // The forwarder: on Kafka, one active among the processes that forward (projections/main.ts
    // too); on the in-process bus, in the gateway's terms below, since only this process's gateway
    // reads that bus: forwarding into it while the gateway waits would only fill it.
    const forward = options.forwarder ?? true;
    const forwarderDeps = { store: deps.store, knex: deps.knex, bus, logger };
    if (forward && bus.kind !== 'in-process') {
      const forwarding = runPassEventForwarder(forwarderDeps);
      stops.push(() => forwarding.stop());
    }

    const role = runDoorGatewayRole({
      knex: deps.knex,
      store: deps.store,
      bus,
      mqttUrl,
      logger,
      reactor: options.reactor ?? true,
      ...(config.mqttTopicRoot ? { topicRoot: config.mqttTopicRoot } : {}),
      ...(options.expirySweepMs ? { gateway: { expirySweepMs: options.expirySweepMs } } : {}),
      ...(options.lockPollMs ? { pollMs: options.lockPollMs } : {}),
      ...(options.lockMaxRetryMs ? { maxRetryMs: options.lockMaxRetryMs } : {}),
      ...(forward && bus.kind === 'in-process' ? { alongside: () => startForwarding(forwarderDeps) } : {}),
    });
    stops.push(() => role.stop());
    // Waits for the lock as the gateway did, and fails `npm start` if its first start fails.
    await role.firstStart;

    const controllers = new Map<number, ControllerSimulator[]>();
    const perFacility = options.controllersPerFacility ?? (broker ? 1 : 0);
    if (perFacility > 0) {
      const ensureControllers = async () => {
        for (const facilityId of await facilitiesToSimulate(deps.knex, role.gateway)) {
          if (controllers.has(facilityId)) continue;
          const list: ControllerSimulator[] = [];
          controllers.set(facilityId, list);
          for (let i = 1; i <= perFacility; i++) {
            const controller = new ControllerSimulator({ url: mqttUrl, facilityId, controllerId: `sim-${facilityId}-${i}`, ...(config.mqttTopicRoot ? { topicRoot: config.mqttTopicRoot } : {}), logger });
            await controller.start();
            list.push(controller);
          }
          log.info({ facilityId, controllers: perFacility }, 'simulated door controllers started');
        }
      };
      await ensureControllers();
      const timer = setInterval(() => {
        ensureControllers().catch((error) => log.warn({ err: error }, 'simulated controllers not started'));
      }, options.facilityPollMs ?? 5000);
      timer.unref();
      stops.push(async () => {
        clearInterval(timer);
        await Promise.all([...controllers.values()].flat().map((c) => c.stop()));
      });
    }

    return {
      bus,
      get gateway() {
        return role.gateway;
      },
      role,
      readinessCheck: role.readinessCheck,
      broker,
      mqttUrl,
      controllers,
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/** Active facilities from the read model (when it exists), plus facilities the running gateway holds credentials for. */
async function facilitiesToSimulate(knex: Knex, gateway: DoorGateway | null): Promise<number[]> {
  const ids = new Set<number>(gateway?.lists.facilityIds() ?? []);
  try {
    const rows = await knex('facilities').where({ is_active: true }).select<{ facility_id: number }[]>('facility_id');
    for (const r of rows) ids.add(Number(r.facility_id));
  } catch {
    // No facilities read model in this database (a door-path-only test): the gateway's list will do.
  }
  return [...ids].sort((a, b) => a - b);
}
