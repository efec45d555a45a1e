// The process's view of its parts' outages, for every place that turns an error into an answer
// (the error middleware, the OAuth protocol endpoints, page routers with error pages of their
// own): whether an error is an outage, and counting and logging it once per outage.
import { Counter } from 'prom-client';
import { DomainError } from '../errors.js';
import type { Logger } from '../logger.js';
import { metricsRegistry } from '../metrics/registry.js';
import { OutageLog } from './outage-log.js';
import { classifyOutage, type Outage, type Part, type PartEndpoint } from './part-outage.js';

/** Seconds a client is asked to wait before trying again when a part is down (a restart takes a few). */
export const OUTAGE_RETRY_AFTER_SECONDS = 5;

/** 503: a part the service stands on is unreachable or restarting; thrown where that is known outright. */
export class PartUnavailableError extends DomainError {
  readonly status = 503;
  readonly code = 'temporarily_unavailable';
  constructor(
    readonly part: Part,
    readonly reason: string,
  ) {
    super(`the ${part} is temporarily unavailable`);
  }
}

const refused = new Counter({
  name: 'guestpass_part_unavailable_total',
  help: 'Requests answered 503 because a part the service stands on (database, event store, Kafka, Redis, MQTT) was unavailable, by part.',
  labelNames: ['part'] as const,
  registers: [metricsRegistry],
});

let endpoints: readonly PartEndpoint[] = [];
const log = new OutageLog();

/** The configured parts' ports (partEndpoints(config)), so a bare socket error names its part. Once, at start. */
export function knowPartEndpoints(configured: readonly PartEndpoint[]): void {
  endpoints = [...configured];
}

/** The outage an error is, or null. */
export function outageOf(error: unknown): Outage | null {
  if (error instanceof PartUnavailableError) return { part: error.part, reason: error.reason };
  return classifyOutage(error, endpoints);
}

/** Counts a request refused for `outage`; the first of an outage is logged (an error), the rest are not. */
export function recordOutage(outage: Outage, logger: Logger): void {
  refused.inc({ part: outage.part });
  if (!log.note(outage, Date.now())) return;
  logger.error({ part: outage.part, reason: outage.reason }, `the ${outage.part.replace('_', ' ')} is unavailable: requests that need it are answered 503 until it is back (logged once per outage)`);
}
