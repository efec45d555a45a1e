// The door-gateway process's work as a role (shared/db/leadership-lock.ts runWhileLeader): the
// gateway and the door access reactor run only while this process holds the active gateway's
// lock. When the lock is lost (PostgreSQL stopped or restarted, the session ended) they stop, the
// process stays up as a standby and asks for the lock again with backoff, and starts a new
// gateway once it holds it: a database outage does not end the process. `npm start`'s door path
// (door-gateway/embedded.ts) runs the same role, with its forwarder as work alongside.
import type { Knex } from 'knex';
import type { Logger } from '../shared/logger.js';
import type { EventStore } from '../shared/event-store/event-store.js';
import type { PassBus } from '../shared/pass-bus/pass-bus.js';
import type { ReadinessCheck } from '../shared/http/readiness.js';
import { runWhileLeader, type LeaderRole } from '../shared/db/leadership-lock.js';
import { SESSION_LOCKS } from '../shared/db/session-lock.js';
import { DoorGateway, type DoorGatewayOptions } from './door-gateway.js';
import { KnexDoorCredentialStore } from './credential-store.js';
import { DoorAccessReactor } from './door-access-reactor.js';
import { mqttCheck, observeDoorGateway } from './door-metrics.js';

export interface DoorGatewayRoleOptions {
  readonly knex: Knex;
  readonly store: EventStore;
  readonly bus: PassBus;
  readonly mqttUrl: string;
  readonly logger: Logger;
  readonly topicRoot?: string;
  /** How often a standby asks for the lock (default 1000 ms); the backoff after a failed attempt starts here. */
  readonly pollMs?: number;
  /** The longest pause between attempts while the database is down (default 5000 ms). */
  readonly maxRetryMs?: number;
  /** Passed to each gateway (a test's shorter timeouts). */
  readonly gateway?: Partial<Omit<DoorGatewayOptions, 'bus' | 'store' | 'mqttUrl' | 'logger'>>;
  /** Run the door access reactor in the role (default true; false when another process runs it). */
  readonly reactor?: boolean;
  /**
   * More work of each term, started once its gateway runs and stopped before it (the embedded
   * forwarder into the in-process bus only this gateway reads). Resolves at once with its stop.
   */
  readonly alongside?: () => Promise<() => Promise<void>>;
}

export interface DoorGatewayRole extends LeaderRole {
  /** The running gateway while this process is the active one. */
  readonly gateway: DoorGateway | null;
  /** Resolves the first time this process is the active one. */
  readonly firstActive: Promise<void>;
  /**
   * Settles with the first term's start once this process holds the lock: rejects if it failed
   * (a broker not reachable), though the role asks again. `npm start` fails on it, as it did when
   * its gateway took the lock itself; the door-gateway process waits on `firstActive` instead.
   */
  readonly firstStart: Promise<void>;
  /** /readyz: fails while a standby, and while the active gateway's MQTT links are down. */
  readonly readinessCheck: ReadinessCheck;
}

export function runDoorGatewayRole(options: DoorGatewayRoleOptions): DoorGatewayRole {
  const { knex, store, bus, mqttUrl, logger } = options;
  let gateway: DoorGateway | null = null;
  let becameActive!: () => void;
  const firstActive = new Promise<void>((resolve) => (becameActive = resolve));
  let firstStarted: { resolve(): void; reject(error: unknown): void } | null = null;
  const firstStart = new Promise<void>((resolve, reject) => (firstStarted = { resolve, reject }));
  firstStart.catch(() => undefined); // told to whoever awaits it; the role logs it and asks again anyway
  const role = runWhileLeader({
    knex,
    key: SESSION_LOCKS.doorGateway,
    holder: 'door-gateway',
    logger,
    ...(options.pollMs ? { pollMs: options.pollMs } : {}),
    ...(options.maxRetryMs ? { maxRetryMs: options.maxRetryMs } : {}),
    start: async () => {
      const running = new DoorGateway({
        ...options.gateway,
        bus,
        store: new KnexDoorCredentialStore(knex),
        mqttUrl,
        logger,
        ...(options.topicRoot ? { topicRoot: options.topicRoot } : {}),
      });
      let reactor: DoorAccessReactor | null = null;
      let stopMetrics: (() => void) | null = null;
      let stopAlongside: (() => Promise<void>) | null = null;
      const stop = async () => {
        gateway = null;
        stopMetrics?.();
        await stopAlongside?.();
        await running.stop();
        await reactor?.stop();
      };
      try {
        // The reactor first: the in-process bus of `npm start` keeps nothing for a consumer group
        // not yet there, and the gateway acknowledges scans to the broker once the bus has them.
        if (options.reactor ?? true) {
          reactor = new DoorAccessReactor({ bus, store, knex, logger });
          await reactor.start();
        }
        await running.start();
        stopMetrics = observeDoorGateway(running);
        if (options.alongside) stopAlongside = await options.alongside();
      } catch (error) {
        firstStarted?.reject(error);
        firstStarted = null;
        await stop().catch(() => undefined);
        throw error;
      }
      gateway = running;
      becameActive();
      firstStarted?.resolve();
      firstStarted = null;
      return stop;
    },
  });
  return {
    get gateway() {
      return gateway;
    },
    get active() {
      return role.active;
    },
    firstActive,
    firstStart,
    readinessCheck: mqttCheck(() => gateway),
    stop: () => role.stop(),
  };
}
