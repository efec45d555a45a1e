// The door path assembled for a test: event store -> forwarder -> bus -> gateway -> MQTT ->
// simulated controllers -> gateway -> bus -> reactor -> event store. Either on the real brokers
// (CI Kafka with topics of its own, Mosquitto) or embedded (in-process bus, aedes).
import { randomBytes, randomUUID } from 'node:crypto';
import { migratedDatabase } from '../../support/database.js';
import { type Knex } from '../../../shared/db/knex.js';
import { createEventStore } from '../../../shared/event-store/create-event-store.js';
import type { EventStore } from '../../../shared/event-store/event-store.js';
import { eventSchemas } from '../../../shared/domain/event-schemas.js';
import { InProcessPassBus } from '../../../shared/pass-bus/in-process-pass-bus.js';
import { KafkaPassBus } from '../../../shared/pass-bus/kafka-pass-bus.js';
import type { PassBus } from '../../../shared/pass-bus/pass-bus.js';
import { PassEventForwarder } from '../../../projections/pass-event-forwarder.js';
import { DoorGateway, type DoorGatewayOptions } from '../../../door-gateway/door-gateway.js';
import { runDoorGatewayRole, type DoorGatewayRole } from '../../../door-gateway/gateway-role.js';
import { KnexDoorCredentialStore } from '../../../door-gateway/credential-store.js';
import { DoorAccessReactor } from '../../../door-gateway/door-access-reactor.js';
import { startEmbeddedBroker, type EmbeddedBroker } from '../../../door-gateway/embedded-broker.js';
import { ControllerSimulator } from '../../../door-gateway/controller-simulator.js';
import { connectLink, endLink, publish } from '../../../door-gateway/mqtt-link.js';
import { doorTopics, type AccessDirection, type DoorTopics } from '../../../door-gateway/contract.js';
import { kafkaTestBus, MOSQUITTO_URL, testLogger } from './door-components.js';
import { newEvent, passCreated, passRevoked, type TestPass } from '../fixtures.js';

export type BrokerKind = 'real' | 'embedded';

/** Facility ids no other test run uses, so retained messages on the shared Mosquitto never collide. */
export function uniqueFacilityId(): number {
  return 100_000 + Math.floor(Math.random() * 900_000_000);
}

export interface HarnessOptions {
  readonly kind: BrokerKind;
  readonly label: string;
  /** Start the forwarder here (default true). */
  readonly forwarder?: boolean;
  /** Start a gateway here (default true): one alone, without the active gateway's lock (startGatewayRole takes it). */
  readonly gateway?: boolean;
  readonly reactor?: boolean;
  /** Reuse a database (an HTTP stack's); default: a fresh one. */
  readonly database?: { readonly url: string; readonly knex: Knex; readonly store: EventStore };
  readonly mqttUrl?: string;
  /** KAFKA_TOPIC_PREFIX of this deployment (its topics also get a run-unique suffix). */
  readonly kafkaTopicPrefix?: string;
  /** MQTT_TOPIC_ROOT of this deployment (default `guestpass/v1`). */
  readonly mqttTopicRoot?: string;
  /** The gateway's consumer group (default: a run-unique one). */
  readonly gatewayGroup?: string;
  /** Kafka brokers of the real bus (default KAFKA_BROKERS: the CI broker). */
  readonly kafkaBrokers?: readonly string[];
  readonly expirySweepMs?: number;
}

export class DoorHarness {
  gateway: DoorGateway | null = null;
  /** Roles started by startGatewayRole, stopped with the harness. */
  readonly gatewayRoles: DoorGatewayRole[] = [];
  forwarder: PassEventForwarder | null = null;
  reactor: DoorAccessReactor | null = null;
  readonly controllers: ControllerSimulator[] = [];
  readonly facilities = new Set<number>();
  readonly gatewayClientId = `gw-test-${randomBytes(4).toString('hex')}`;
  readonly gatewayGroup: string;
  private readonly ownsDatabase: boolean;

  private constructor(
    readonly options: HarnessOptions,
    readonly databaseUrl: string,
    readonly knex: Knex,
    readonly store: EventStore,
    readonly bus: PassBus,
    readonly mqttUrl: string,
    readonly broker: EmbeddedBroker | null,
    ownsDatabase: boolean,
    /** Run-unique suffix of the Kafka topics (real brokers). */
    readonly topicSuffix: string,
  ) {
    this.ownsDatabase = ownsDatabase;
    this.gatewayGroup = options.gatewayGroup ?? `guestpass-door-gateway-${randomBytes(4).toString('hex')}`;
  }

  static async start(options: HarnessOptions): Promise<DoorHarness> {
    let url: string;
    let knex: Knex;
    let store: EventStore;
    if (options.database) {
      ({ url, knex, store } = options.database);
    } else {
      ({ url, knex } = await migratedDatabase(options.label, { max: 10 }));
      store = createEventStore({ databaseUrl: url, eventStoreUrl: null, schemas: eventSchemas });
    }
    const broker = options.kind === 'embedded' && !options.mqttUrl ? await startEmbeddedBroker() : null;
    const mqttUrl = options.mqttUrl ?? broker?.url ?? MOSQUITTO_URL;
    const suffix = `.test-${randomBytes(4).toString('hex')}`;
    const bus = options.kind === 'real' ? kafkaTestBus(3, suffix, options.kafkaBrokers, options.kafkaTopicPrefix) : new InProcessPassBus({ retryDelayMs: 20 });
    const harness = new DoorHarness(options, url, knex, store, bus, mqttUrl, broker, !options.database, suffix);
    await bus.ensureTopics();
    if (options.gateway ?? true) await harness.startGateway();
    if (options.reactor ?? true) await harness.startReactor();
    if (options.forwarder ?? true) await harness.startForwarder();
    return harness;
  }

  /**
   * A gateway alone, started at once: the deployment's only one, so it takes no lock (in
   * production the caller, gateway-role.ts, holds it; startGatewayRole runs that).
   */
  async startGateway(): Promise<DoorGateway> {
    this.gateway = new DoorGateway({
      bus: this.bus,
      store: new KnexDoorCredentialStore(this.knex),
      mqttUrl: this.mqttUrl,
      logger: testLogger,
      ...this.gatewayOptions(this.gatewayClientId),
      ...(this.options.mqttTopicRoot ? { topicRoot: this.options.mqttTopicRoot } : {}),
    });
    await this.gateway.start();
    return this.gateway;
  }

  /**
   * The production door-gateway role (gateway-role.ts): its gateway runs only while it holds the
   * deployment's active gateway lock, a standby otherwise; without the reactor (startReactor's).
   * `name` parts the MQTT client ids of the roles of one test.
   */
  startGatewayRole(name: string, pollMs?: number): DoorGatewayRole {
    const role = runDoorGatewayRole({
      knex: this.knex,
      store: this.store,
      bus: this.bus,
      mqttUrl: this.mqttUrl,
      logger: testLogger,
      reactor: false,
      ...(pollMs ? { pollMs } : {}),
      ...(this.options.mqttTopicRoot ? { topicRoot: this.options.mqttTopicRoot } : {}),
      gateway: this.gatewayOptions(`${this.gatewayClientId}-${name}`),
    });
    this.gatewayRoles.push(role);
    return role;
  }

  private gatewayOptions(clientId: string): Pick<DoorGatewayOptions, 'clientId' | 'groupId' | 'expirySweepMs' | 'connectTimeoutMs'> {
    return {
      clientId,
      // Every gateway of the deployment is a member of one group: a standby gets what the active
      // one left uncommitted (and the in-process bus waits for every group it knows).
      groupId: this.gatewayGroup,
      expirySweepMs: this.options.expirySweepMs ?? 200,
      connectTimeoutMs: 10_000,
    };
  }

  async startForwarder(): Promise<PassEventForwarder> {
    this.forwarder = new PassEventForwarder({ store: this.store, knex: this.knex, bus: this.bus, logger: testLogger, retry: { initialMs: 50, maxMs: 1000 } });
    await this.forwarder.start();
    return this.forwarder;
  }

  async startReactor(): Promise<DoorAccessReactor> {
    this.reactor = new DoorAccessReactor({
      bus: this.bus,
      store: this.store,
      knex: this.knex,
      logger: testLogger,
      groupId: `guestpass-door-access-${randomBytes(4).toString('hex')}`,
    });
    await this.reactor.start();
    return this.reactor;
  }

  async controller(facilityId: number, options: { clean?: boolean; controllerId?: string; direction?: AccessDirection } = {}): Promise<ControllerSimulator> {
    this.facilities.add(facilityId);
    const controller = new ControllerSimulator({
      url: this.mqttUrl,
      facilityId,
      controllerId: options.controllerId ?? `c-${randomBytes(4).toString('hex')}`,
      clean: options.clean ?? false,
      ...(this.options.mqttTopicRoot ? { topicRoot: this.options.mqttTopicRoot } : {}),
      ...(options.direction ? { direction: options.direction } : {}),
      statusDebounceMs: 100,
      // Periodic reports let the gateway notice messages a broker dropped (queue limits) and resync.
      statusIntervalMs: 2000,
      logger: testLogger,
    });
    await controller.start();
    this.controllers.push(controller);
    return controller;
  }

  /** Appends PassCreated as the command side does (the guest-invites stream of its creator). */
  async createPass(pass: TestPass, streamName = `guest-invites-1-${pass.validFrom.slice(0, 7)}`): Promise<string> {
    this.facilities.add(pass.facilityId);
    await this.store.appendToStream(streamName, [newEvent(passCreated(pass))], 'any');
    return streamName;
  }

  async revokePass(pass: TestPass, streamName = `guest-invites-1-${pass.validFrom.slice(0, 7)}`): Promise<void> {
    await this.store.appendToStream(streamName, [newEvent(passRevoked(pass))], 'any');
  }

  async stop(): Promise<void> {
    await Promise.all(this.controllers.map((c) => c.stop().catch(() => undefined)));
    await this.forwarder?.stop();
    await this.reactor?.stop();
    await this.gateway?.stop();
    for (const role of this.gatewayRoles.splice(0)) await role.stop();
    await this.bus.close();
    if (this.bus instanceof KafkaPassBus) await this.bus.deleteTopics().catch(() => undefined);
    if (this.broker) await this.broker.close();
    else await clearRetained(this.mqttUrl, this.facilities, this.controllers, doorTopics(this.options.mqttTopicRoot)).catch(() => undefined);
    if (this.ownsDatabase) {
      await this.store.close();
      await this.knex.destroy();
    }
  }
}

/** Leaves the shared Mosquitto as we found it: no retained credentials or statuses of this test. */
async function clearRetained(url: string, facilities: ReadonlySet<number>, controllers: readonly ControllerSimulator[], topics: DoorTopics): Promise<void> {
  const client = connectLink({ url, clientId: `cleanup-${randomUUID().slice(0, 8)}`, clean: true });
  const found = new Set<string>();
  client.on('message', (topic, payload, packet) => {
    if (packet.retain && payload.length > 0) found.add(topic);
  });
  await new Promise<void>((resolve) => client.once('connect', () => resolve()));
  const wanted = [...facilities].flatMap((f) => [topics.credentialsOf(f), `${topics.root}/facilities/${f}/controllers/+/status`]);
  if (wanted.length > 0) {
    await new Promise<void>((resolve) => client.subscribe(wanted, { qos: 1 }, () => resolve()));
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  for (const c of controllers) found.add(topics.controller(c.facilityId, c.controllerId, 'status'));
  await Promise.all([...found].map((topic) => publish(client, topic, '', true)));
  await endLink(client);
}
