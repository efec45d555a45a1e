// The door path composed in one process, for `npm start` (the embedded default) and for tests:
//   forwarder -> pass bus -> door-gateway -> MQTT -> controllers -> door-gateway -> bus -> reactor
// With no KAFKA_BROKERS the bus is in-process; with no MQTT_URL an embedded aedes broker runs on
// loopback with one simulated controller per active facility, so a newcomer can create a pass and
// `guestpass door scan` it at once. With both set, the same pieces use the real brokers.
import type { Knex } from 'knex';
import type { Config } from '../shared/config.js';
import type { Logger } from '../shared/logger.js';
import type { EventStore } from '../shared/event-store/event-store.js';
import { createPassBus } from '../shared/pass-bus/create-pass-bus.js';
import type { PassBus } from '../shared/pass-bus/pass-bus.js';
import { PassEventForwarder } from '../projections/pass-event-forwarder.js';
import { DoorGateway } from './door-gateway.js';
import { KnexDoorCredentialStore } from './credential-store.js';
import { DoorAccessReactor } from './door-access-reactor.js';
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
  /** Write the embedded broker's URL into the data folder for the CLI (default true). */
  readonly recordBrokerUrl?: boolean;
}

export interface DoorPath {
  readonly bus: PassBus;
  readonly gateway: DoorGateway;
  readonly forwarder: PassEventForwarder | null;
  readonly reactor: DoorAccessReactor | null;
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

    // The reactor first: the in-process bus keeps nothing for a consumer not yet there, and the
    // gateway acknowledges scans to the broker once the bus has them.
    let reactor: DoorAccessReactor | null = null;
    if (options.reactor ?? true) {
      reactor = new DoorAccessReactor({ bus, store: deps.store, knex: deps.knex, logger });
      await reactor.start();
      const started = reactor;
      stops.push(() => started.stop());
    }

    const gateway = new DoorGateway({
      bus,
      store: new KnexDoorCredentialStore(deps.knex),
      mqttUrl,
      logger,
      ...(config.mqttTopicRoot ? { topicRoot: config.mqttTopicRoot } : {}),
      ...(options.expirySweepMs ? { expirySweepMs: options.expirySweepMs } : {}),
    });
    await gateway.start();
    stops.push(() => gateway.stop());

    let forwarder: PassEventForwarder | null = null;
    if (options.forwarder ?? true) {
      forwarder = new PassEventForwarder({ store: deps.store, knex: deps.knex, bus, logger });
      await forwarder.start();
      const started = forwarder;
      stops.push(() => started.stop());
    }

    const controllers = new Map<number, ControllerSimulator[]>();
    const perFacility = options.controllersPerFacility ?? (broker ? 1 : 0);
    if (perFacility > 0) {
      const ensureControllers = async () => {
        for (const facilityId of await facilitiesToSimulate(deps.knex, gateway)) {
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

    return { bus, gateway, forwarder, reactor, broker, mqttUrl, controllers, stop: stopAll };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/** Active facilities from the read model (when it exists), plus facilities the gateway holds credentials for. */
async function facilitiesToSimulate(knex: Knex, gateway: DoorGateway): Promise<number[]> {
  const ids = new Set<number>(gateway.lists.facilityIds());
  try {
    const rows = await knex('facilities').where({ is_active: true }).select<{ facility_id: number }[]>('facility_id');
    for (const r of rows) ids.add(Number(r.facility_id));
  } catch {
    // No facilities read model in this database (a door-path-only test): the gateway's list will do.
  }
  return [...ids].sort((a, b) => a - b);
}
