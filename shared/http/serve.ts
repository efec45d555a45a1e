// Runs a process (a service alone, the projections runner, the door-gateway) until SIGINT or
// SIGTERM, then closes it cleanly. Its port is open from the first moment (service-server.ts):
// 503 with Retry-After while it starts, its app and /readyz once started, refused connections
// and 503 on open ones once stopping.
import type http from 'node:http';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { onShutdownSignal } from '../shutdown-signal.js';
import type { ReadinessCheck } from './readiness.js';
import { openServiceServer, type ServiceServer } from './service-server.js';
import { partEndpoints } from '../outage/part-outage.js';
import { knowPartEndpoints } from '../outage/part-unavailable.js';

export interface StartedService {
  /** The app's request handler; null for a process whose port has only the operators' endpoints. */
  readonly app: http.RequestListener | null;
  /** What /readyz checks: the connections this process uses. */
  readonly checks: readonly ReadinessCheck[];
  /** Stops the process's work and closes its connections; called once the HTTP server has drained. */
  close(): Promise<void>;
}

export interface ServiceControl {
  /** Stops the process as a signal would, then exits with `exitCode` (when the stop succeeded). */
  stop(reason: string, exitCode?: number): void;
  /**
   * Aborted when stopping begins. A stop waits for the start to end first: a start that may wait
   * long (a standby waiting for its turn) gives up on it.
   */
  readonly stopping: AbortSignal;
}

export async function runService(
  options: {
 readonly config: Pick<Config, 'host' | 'port' | 'opsPort' | 'http' | 'metricsToken' | 'databaseUrl' | 'eventStoreUrl' | 'kafkaBrokers' | 'mqttUrl' | 'redisUrl'>;
    readonly logger: Logger;
    readonly name: string;
  },
  start: (server: ServiceServer, control: ServiceControl) => Promise<StartedService>,
): Promise<void> {
  const { config, logger, name } = options;
  // A bare socket error (ECONNREFUSED to a port) then names its part in the 503's log line.
  knowPartEndpoints(partEndpoints(config));
  const server = await openServiceServer({ host: config.host, port: config.port, opsPort: config.opsPort, timeouts: config.http, metricsToken: config.metricsToken, logger, name });
  let stopping: Promise<void> | null = null;
  const aborter = new AbortController();
  let started: Promise<StartedService>;
  const stop = (reason: string, exitCode = 0) => {
    stopping ??= (async () => {
      logger.info({ signal: reason }, 'stopping');
      aborter.abort();
      await server.close();
      let service: StartedService;
      try {
        service = await started;
      } catch (error) {
        // The start gave up on the stop (or failed meanwhile): it closed what it had opened.
        if (!(error instanceof Error && error.name === 'AbortError')) logger.warn({ err: error }, 'the start failed while stopping');
        return process.exit(exitCode);
      }
      try {
        await service.close();
        process.exit(exitCode);
      } catch (error) {
        logger.error({ err: error }, 'error while stopping');
        process.exit(1);
      }
    })();
  };
  // From the start: a signal while the process starts stops it once the start has ended.
  onShutdownSignal((signal) => stop(signal));
  started = start(server, { stop, stopping: aborter.signal });
  started.catch(() => undefined);
  try {
    const service = await started;
    await server.serve(service.app, service.checks);
    if (server.lifecycle() === 'serving') logger.info({ host: config.host, port: server.port }, `${name} listening`);
  } catch (error) {
    await server.close();
    if (aborter.signal.aborted) return; // the stop under way ends the process
    throw error;
  }
}
