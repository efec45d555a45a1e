// Which part the service stands on (the database, the event store, Kafka, Redis, the MQTT broker)
// an error says is unreachable or restarting, from the error alone: its class or name, its code
// (a SQLSTATE, a socket errno) and its message, following its causes. Pure: no I/O, no clock.
// The error middleware answers such an error 503 `temporarily_unavailable` with Retry-After
// instead of 500 (a client can then tell "try again" from "this is a bug"); the outage log names
// the part once per outage.
export type Part = 'database' | 'event_store' | 'kafka' | 'redis' | 'mqtt' | 'network';

export interface Outage {
  readonly part: Part;
  /** What said so: a SQLSTATE, an errno, an error class, `connection_terminated`. Never a host or a message. */
  readonly reason: string;
}

/** A configured part's port: a bare socket error (ECONNREFUSED ...) is the part whose port it names. */
export interface PartEndpoint {
  readonly part: Part;
  readonly port: number;
}

/** Socket errors of a connection that failed or broke (Node's errno codes). */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNABORTED', 'EHOSTDOWN', 'ENETDOWN']);

/**
 * PostgreSQL SQLSTATEs of a server that is going away or not there yet: class 08 (connection
 * exception), 57P01 admin_shutdown (a fast stop), 57P02 crash_shutdown (another backend
 * crashed), 57P03 cannot_connect_now (starting up, in recovery), 53300 too_many_connections.
 */
function postgresUnavailable(code: string): boolean {
  return /^08[0-9A-Z]{3}$/.test(code) || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300';
}

/** Messages of node-postgres (pg, pg-pool) and knex when a connection broke or never came. */
const POSTGRES_MESSAGES: ReadonlyArray<readonly [RegExp, string]> = [
  [/^Connection terminated( unexpectedly| due to connection timeout)?$/, 'connection_terminated'],
  [/^Client has encountered a connection error and is not queryable$/, 'connection_terminated'],
  [/^timeout expired$/, 'connect_timeout'],
  [/^Knex: Timeout acquiring a connection/, 'pool_timeout'],
];

/** ioredis: the command could not be sent or answered because the connection is down. */
const REDIS_MESSAGES: ReadonlyArray<RegExp> = [
  /^Connection is closed\.$/,
  /^Stream isn't writeable and enableOfflineQueue options is false$/,
  /^Reached the max retries per request limit/,
  /^(LOADING|MASTERDOWN|TRYAGAIN|CLUSTERDOWN) /,
];

/** kafkajs: errors of a broker that is unreachable, restarting or electing a leader. */
const KAFKA_UNAVAILABLE = new Set([
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSRequestTimeoutError',
  'KafkaJSBrokerNotFound',
  'KafkaJSNumberOfRetriesExceeded',
  'KafkaJSLockTimeout',
  'KafkaJSTimeout',
  'KafkaJSMetadataNotLoaded',
  'KafkaJSNoBrokerAvailableError',
  'KafkaJSGroupCoordinatorNotFound',
]);

/** mqtt.js: the client is not connected (or the broker refused for being unavailable, CONNACK 3). */
const MQTT_MESSAGES: ReadonlyArray<RegExp> = [/^Connection closed$/, /^client disconnecting$/, /^Keepalive timeout$/, /^Connection refused: Server unavailable$/];

/** @eventstore/db-client error types (`type`) and names of a node that cannot serve now. */
const EVENTSTORE_UNAVAILABLE = new Set(['unavailable', 'deadline-exceeded', 'not-leader', 'UnavailableError', 'DeadlineExceededError', 'NotLeaderError']);

interface ErrorLike {
  readonly name?: unknown;
  readonly message?: unknown;
  readonly code?: unknown;
  readonly type?: unknown;
  readonly port?: unknown;
  readonly severity?: unknown;
  readonly retriable?: unknown;
  readonly cause?: unknown;
  readonly originalError?: unknown;
  readonly errors?: unknown;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** One error's own verdict, without its causes. */
function classifyOne(error: ErrorLike, endpoints: readonly PartEndpoint[]): Outage | null {
  const name = text(error.name);
  const message = text(error.message);
  const code = typeof error.code === 'number' ? String(error.code) : text(error.code);

  if (name.startsWith('KafkaJS')) {
    if (KAFKA_UNAVAILABLE.has(name)) return { part: 'kafka', reason: name };
    // A protocol error the broker marks retriable: a leader election, a coordinator moving.
    if (name === 'KafkaJSProtocolError' && error.retriable === true) return { part: 'kafka', reason: text(error.type) || name };
    return null; // a non-retriable one may wrap a connection error: its cause decides
  }
  if (name === 'MaxRetriesPerRequestError') return { part: 'redis', reason: name };
  if (REDIS_MESSAGES.some((m) => m.test(message))) return { part: 'redis', reason: name === 'ReplyError' ? message.split(' ', 1)[0]! : 'connection_closed' };
  if (EVENTSTORE_UNAVAILABLE.has(text(error.type)) || EVENTSTORE_UNAVAILABLE.has(name)) return { part: 'event_store', reason: text(error.type) || name };
  if (MQTT_MESSAGES.some((m) => m.test(message))) return { part: 'mqtt', reason: message === 'Connection refused: Server unavailable' ? 'connack_3' : 'connection_closed' };
  if (name === 'KnexTimeoutError') return { part: 'database', reason: 'pool_timeout' };
  // A SQLSTATE: five characters, from a server message (pg's DatabaseError carries a severity).
  if (/^[0-9A-Z]{5}$/.test(code) && postgresUnavailable(code)) return { part: 'database', reason: code };
  for (const [pattern, reason] of POSTGRES_MESSAGES) if (pattern.test(message)) return { part: 'database', reason };
  if (SOCKET_CODES.has(code) && typeof error.port === 'number') {
    const port = error.port;
    return { part: endpoints.find((e) => e.port === port)?.part ?? 'network', reason: code };
  }
  return null;
}

/**
 * The part an error says is unavailable, or null when it says something else (a bug, a refusal).
 * Looks through `cause`, kafkajs's `originalError` and an AggregateError's `errors` (a connect to
 * every address of a name), five levels deep at most.
 */
export function classifyOutage(error: unknown, endpoints: readonly PartEndpoint[] = []): Outage | null {
  const queue: Array<{ error: unknown; depth: number }> = [{ error, depth: 0 }];
  const seen = new Set<unknown>();
  // A socket error that names no port (an AggregateError of a connect to every address of a
  // name): its inner errors may; if none does, it is the network's.
  let portless: Outage | null = null;
  while (queue.length > 0) {
    const { error: current, depth } = queue.shift()!;
    if (typeof current !== 'object' || current === null || seen.has(current)) continue;
    seen.add(current);
    const e = current as ErrorLike;
    const verdict = classifyOne(e, endpoints);
    if (verdict) return verdict;
    if (portless === null && typeof e.code === 'string' && SOCKET_CODES.has(e.code)) portless = { part: 'network', reason: e.code };
    if (depth >= 5) continue;
    // fetch's "fetch failed" wraps a socket error of a remote HTTP server (an upstream identity
    // provider, an SMS webhook): not a part of ours, and not ours to call an outage.
    if (e.name === 'TypeError' && e.message === 'fetch failed') continue;
    for (const next of [e.cause, e.originalError, ...(Array.isArray(e.errors) ? e.errors : [])]) queue.push({ error: next, depth: depth + 1 });
  }
  return portless;
}

/** The default port of each URL scheme the parts use, for a URL that names none. */
const DEFAULT_PORTS: Readonly<Record<string, number>> = {
  'postgres:': 5432,
  'postgresql:': 5432,
  'esdb:': 2113,
  'esdb+discover:': 2113,
  'redis:': 6379,
  'rediss:': 6379,
  'mqtt:': 1883,
  'tcp:': 1883,
  'mqtts:': 8883,
  'ws:': 80,
  'wss:': 443,
};

function urlPort(url: string | null): number | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    return u.port ? Number(u.port) : (DEFAULT_PORTS[u.protocol] ?? null);
  } catch {
    return null;
  }
}

/** The configured parts' ports (a part given no URL is embedded or in-process, and has none). */
export function partEndpoints(config: {
  readonly databaseUrl: string | null;
  readonly eventStoreUrl: string | null;
  readonly kafkaBrokers: readonly string[];
  readonly mqttUrl: string | null;
  readonly redisUrl: string | null;
}): PartEndpoint[] {
  const endpoints: PartEndpoint[] = [];
  const add = (part: Part, port: number | null) => {
    if (port !== null && Number.isInteger(port) && !endpoints.some((e) => e.port === port)) endpoints.push({ part, port });
  };
  add('database', urlPort(config.databaseUrl));
  add('event_store', urlPort(config.eventStoreUrl));
  for (const broker of config.kafkaBrokers) add('kafka', Number(broker.slice(broker.lastIndexOf(':') + 1)) || null);
  add('mqtt', urlPort(config.mqttUrl));
  add('redis', urlPort(config.redisUrl));
  return endpoints;
}
