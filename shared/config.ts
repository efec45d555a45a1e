// The one place that reads the environment. Every variable here is named in the README.
import path from 'node:path';
import { parseKeyEncryptionKey } from './oauth/key-encryption-key.js';
import type { FederationConfig } from './oauth/oauth-services.js';
import { defaultLogFormat, LOG_FORMATS, type LogFormat } from './logger.js';

export interface Config {
  /** HTTP port of the embedded gateway and of each service run alone. */
  readonly port: number;
  /** OPS_PORT: /healthz, /readyz and /metrics on a port of their own, and PORT opened only once the process serves; null = both on PORT. */
  readonly opsPort: number | null;
  readonly host: string;
  /** Absolute base URL the service is reached at (issuer, links). */
  readonly publicBaseUrl: string | null;
  /** PostgreSQL for read models (and the event store when EVENTSTORE_URL is unset); null = embedded. */
  readonly databaseUrl: string | null;
  /** EventStoreDB connection string; null = PostgreSQL event store. */
  readonly eventStoreUrl: string | null;
  /** Kafka bootstrap brokers; empty = in-process pass event bus. */
  readonly kafkaBrokers: readonly string[];
  readonly kafkaPassTopicPartitions: number;
  /** KAFKA_TOPIC_PREFIX: put before every topic and consumer-group name, so deployments can share a Kafka cluster. */
  readonly kafkaTopicPrefix: string;
  /** MQTT_TOPIC_ROOT: the root of every door topic (default `guestpass/v1`), so deployments can share an MQTT broker. */
  readonly mqttTopicRoot: string;
  /** MQTT broker for door controllers; null = embedded aedes broker. */
  readonly mqttUrl: string | null;
  /** Folder for embedded data (PostgreSQL cluster, generated keys, outbox). */
  readonly dataDir: string;
  readonly logLevel: string;
  /** LOG_FORMAT: `pretty` lines on a terminal, else `json`. */
  readonly logFormat: LogFormat;
  /** How long a write waits for the read models that serve the next read. */
  readonly projectionWaitMs: number;
  /** Honour X-Forwarded-For from the gateway (production behind a reverse proxy). */
  readonly trustProxy: boolean;
  /** Redis for the rate-limit counters every instance shares; null = PostgreSQL (DATABASE_URL). */
  readonly redisUrl: string | null;
  /** OAUTH_CLIENT_RATE_LIMIT: requests per second one authenticated client may make of each protocol endpoint. */
  readonly oauthClientRateLimit: number;
  /** Signs page cursors; every instance must share it. null = generated (embedded: kept in dataDir). */
  readonly pageCursorSecret: string | null;
  /** OAUTH_KEY_ENCRYPTION_KEY: seals the OAuth signing keys at rest; null = generated into the data folder. */
  readonly oauthKeyEncryptionKey: Buffer | null;
  /** DATA_KEY_ENCRYPTION_KEY: wraps the personal-data keys and the contact search key; null = generated into the data folder. */
  readonly dataKeyEncryptionKey: Buffer | null;
  /** DATA_KEY_ENCRYPTION_KEY_PREVIOUS: earlier data KEKs, still unwrapping during a rotation. */
  readonly previousDataKeyEncryptionKeys: Buffer[];
  /** FEDERATED_ISSUER and friends: an upstream OpenID Provider for federated sign-in; null = none. */
  readonly federation: FederationConfig | null;
  /** SMTP_URL and MAIL_FROM: pass emails; null = written to the outbox folder. */
  readonly mail: MailConfig | null;
  /** SMS_PROVIDER, SMS_URL and friends: pass SMS; null = written to the outbox folder. */
  readonly sms: SmsConfig | null;
  /** How long a pass create waits for its email and SMS to be accepted before answering. */
  readonly deliveryWaitMs: number;
  /** HTTP_*_TIMEOUT_MS: how long each HTTP server keeps idle connections and waits for a request's parts. */
  readonly http: HttpTimeouts;
  /** METRICS_TOKEN: the bearer token /metrics asks for; null = /metrics is open (keep it off the public gateway). */
  readonly metricsToken: string | null;
}

export interface HttpTimeouts {
  /** Idle time before a kept-alive connection is closed: longer than the gateway's own (nginx: 60 s). */
  readonly keepAliveTimeoutMs: number;
  /** Time to receive a request's headers (a slowloris client is cut off after it). */
  readonly headersTimeoutMs: number;
  /** Time to receive a whole request, headers and body. */
  readonly requestTimeoutMs: number;
  /**
   * On a stop, how long an idle kept-alive connection is left to its client (which closes it, or
   * sends one last request, answered with `Connection: close`) before the service closes it:
   * longer than the gateway's upstream keepalive_timeout (nginx: 4 s), so that the service never
   * closes a connection the gateway may be sending a POST on.
   */
  readonly stopIdleMs: number;
}

export interface MailConfig {
  /** `smtp://user:pass@host:587` (STARTTLS when offered) or `smtps://` (implicit TLS). */
  readonly smtpUrl: string;
  /** MAIL_FROM; null = `Guest Pass <no-reply@{host of PUBLIC_BASE_URL}>`. */
  readonly from: string | null;
}

export type SmsConfig =
  | { readonly provider: 'webhook'; readonly url: string; readonly authToken: string | null }
  | {
      readonly provider: 'twilio';
      /** SMS_URL, else Twilio's API base. */
      readonly baseUrl: string;
      readonly accountSid: string;
      readonly authToken: string;
      readonly from: string;
    };

export const TWILIO_API_BASE = 'https://api.twilio.com';

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

type Env = Readonly<Record<string, string | undefined>>;

function optionalUrl(env: Env, name: string, protocols: readonly string[]): string | null {
  const value = env[name]?.trim();
  if (!value) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${name} is not a valid URL`);
  }
  if (!protocols.includes(url.protocol)) {
    throw new ConfigError(`${name} must use one of ${protocols.join(', ')} (got ${url.protocol})`);
  }
  return value;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}`);
  return value;
}

function logFormat(env: Env): LogFormat {
  const value = env.LOG_FORMAT?.trim();
  if (!value) return defaultLogFormat();
  if (!(LOG_FORMATS as readonly string[]).includes(value)) throw new ConfigError(`LOG_FORMAT must be one of ${LOG_FORMATS.join(', ')} (got "${value}")`);
  return value as LogFormat;
}

function brokers(env: Env): string[] {
  const raw = env.KAFKA_BROKERS?.trim();
  if (!raw) return [];
  const list = raw.split(',').map((b) => b.trim()).filter(Boolean);
  for (const b of list) {
    if (!/^[A-Za-z0-9.\-_\[\]:]+:\d{1,5}$/.test(b)) throw new ConfigError(`KAFKA_BROKERS entry "${b}" is not host:port`);
  }
  return list;
}

function secret(env: Env, name: string): string | null {
  const value = env[name]?.trim();
  if (!value) return null;
  // Names the variable, never echoes the value.
  if (Buffer.byteLength(value) < 32) throw new ConfigError(`${name} must be at least 32 characters of random data`);
  return value;
}

function keyEncryptionKey(env: Env, name: string): Buffer | null {
  const value = env[name]?.trim();
  if (!value) return null;
  try {
    return parseKeyEncryptionKey(value);
  } catch {
    throw new ConfigError(`${name} must be 32 bytes, as 64 hex digits or base64url`);
  }
}

/** A comma-separated list of KEKs; names the variable and the entry's position, never a value. */
function keyEncryptionKeys(env: Env, name: string): Buffer[] {
  const value = env[name]?.trim();
  if (!value) return [];
  return value.split(',').map((entry, i) => {
    try {
      return parseKeyEncryptionKey(entry);
    } catch {
      throw new ConfigError(`${name} entry ${i + 1} must be 32 bytes, as 64 hex digits or base64url (entries separated by commas)`);
    }
  });
}

function federation(env: Env): FederationConfig | null {
  const issuer = optionalUrl(env, 'FEDERATED_ISSUER', ['http:', 'https:']);
  const clientId = env.FEDERATED_CLIENT_ID?.trim();
  if (!issuer && !clientId) return null;
  if (!issuer || !clientId) throw new ConfigError('FEDERATED_ISSUER and FEDERATED_CLIENT_ID are set together');
  return {
    issuer: issuer.replace(/\/+$/, ''),
    clientId,
    clientSecret: env.FEDERATED_CLIENT_SECRET?.trim() || null,
    displayName: env.FEDERATED_DISPLAY_NAME?.trim() || new URL(issuer).host,
    trustUnverifiedEmail: env.FEDERATED_TRUST_EMAIL === 'true' || env.FEDERATED_TRUST_EMAIL === '1',
  };
}

function mail(env: Env): MailConfig | null {
  const smtpUrl = optionalUrl(env, 'SMTP_URL', ['smtp:', 'smtps:']);
  const from = env.MAIL_FROM?.trim() || null;
  if (!smtpUrl) {
    if (from) throw new ConfigError('MAIL_FROM is set without SMTP_URL');
    return null;
  }
  // A header value: a line break would let it write headers of its own.
  if (from && /[\r\n]/.test(from)) throw new ConfigError('MAIL_FROM must be one line');
  return { smtpUrl, from };
}

function sms(env: Env): SmsConfig | null {
  const provider = env.SMS_PROVIDER?.trim() || 'webhook';
  const url = optionalUrl(env, 'SMS_URL', ['http:', 'https:']);
  if (provider === 'twilio') {
    const accountSid = env.TWILIO_ACCOUNT_SID?.trim();
    const authToken = env.TWILIO_AUTH_TOKEN?.trim();
    const from = env.SMS_FROM?.trim();
    if (!accountSid || !authToken || !from) {
      throw new ConfigError('SMS_PROVIDER=twilio needs TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and SMS_FROM');
    }
    if (!/^[A-Za-z0-9]{2,64}$/.test(accountSid)) throw new ConfigError('TWILIO_ACCOUNT_SID must be letters and digits');
    return { provider, baseUrl: (url ?? TWILIO_API_BASE).replace(/\/+$/, ''), accountSid, authToken, from };
  }
  if (provider !== 'webhook') throw new ConfigError('SMS_PROVIDER must be webhook or twilio');
  if (!url) return null;
  return { provider, url, authToken: env.SMS_AUTH_TOKEN?.trim() || null };
}

function httpTimeouts(env: Env): HttpTimeouts {
  const timeouts = {
    keepAliveTimeoutMs: integer(env, 'HTTP_KEEP_ALIVE_TIMEOUT_MS', 65_000, 1000, 3_600_000),
    headersTimeoutMs: integer(env, 'HTTP_HEADERS_TIMEOUT_MS', 10_000, 100, 600_000),
    requestTimeoutMs: integer(env, 'HTTP_REQUEST_TIMEOUT_MS', 30_000, 100, 3_600_000),
    stopIdleMs: integer(env, 'HTTP_STOP_IDLE_MS', 6000, 0, 25_000),
  };
  if (timeouts.headersTimeoutMs > timeouts.requestTimeoutMs) {
    throw new ConfigError('HTTP_HEADERS_TIMEOUT_MS must not be longer than HTTP_REQUEST_TIMEOUT_MS');
  }
  return timeouts;
}

/** Kafka's legal name characters; the pass topic (21 characters) must still fit its 249. */
function kafkaTopicPrefix(env: Env): string {
  const value = env.KAFKA_TOPIC_PREFIX?.trim() ?? '';
  if (!/^[A-Za-z0-9._-]{0,200}$/.test(value)) throw new ConfigError('KAFKA_TOPIC_PREFIX must be at most 200 letters, digits, ".", "_" or "-"');
  return value;
}

/** MQTT topic levels separated by "/": no wildcards, empty levels or leading "$" (a broker's system topics). */
function mqttTopicRoot(env: Env): string {
  const value = env.MQTT_TOPIC_ROOT?.trim() || 'guestpass/v1';
  if (!/^[^+#$/\u0000][^+#\u0000]{0,199}$/.test(value) || value.endsWith('/') || value.includes('//')) {
    throw new ConfigError('MQTT_TOPIC_ROOT must be topic levels separated by "/" (for example acme/guestpass/v1), without "+", "#", empty levels or a leading "$"');
  }
  return value;
}

function metricsToken(env: Env): string | null {
  const value = env.METRICS_TOKEN?.trim();
  if (!value) return null;
  // Names the variable, never echoes the value.
  if (!/^[\x21-\x7e]{16,}$/.test(value)) throw new ConfigError('METRICS_TOKEN must be at least 16 printable characters without spaces');
  return value;
}

export function loadConfig(env: Env = process.env): Config {
  const publicBaseUrl = optionalUrl(env, 'PUBLIC_BASE_URL', ['http:', 'https:']);
  return {
    port: integer(env, 'PORT', 8080, 0, 65535),
    opsPort: env.OPS_PORT?.trim() ? integer(env, 'OPS_PORT', 9090, 0, 65535) : null,
    host: env.HOST?.trim() || '127.0.0.1',
    publicBaseUrl: publicBaseUrl?.replace(/\/+$/, '') ?? null,
    databaseUrl: optionalUrl(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    eventStoreUrl: optionalUrl(env, 'EVENTSTORE_URL', ['esdb:', 'esdb+discover:']),
    kafkaBrokers: brokers(env),
    kafkaPassTopicPartitions: integer(env, 'KAFKA_PASS_TOPIC_PARTITIONS', 6, 1, 1000),
    kafkaTopicPrefix: kafkaTopicPrefix(env),
    mqttTopicRoot: mqttTopicRoot(env),
    mqttUrl: optionalUrl(env, 'MQTT_URL', ['mqtt:', 'mqtts:', 'ws:', 'wss:', 'tcp:']),
    dataDir: path.resolve(env.GUESTPASS_DATA_DIR?.trim() || 'var'),
    logLevel: env.LOG_LEVEL?.trim() || 'info',
    logFormat: logFormat(env),
    projectionWaitMs: integer(env, 'PROJECTION_WAIT_MS', 2000, 0, 60_000),
    trustProxy: env.TRUST_PROXY === 'true' || env.TRUST_PROXY === '1',
    pageCursorSecret: secret(env, 'PAGE_CURSOR_SECRET'),
    oauthKeyEncryptionKey: keyEncryptionKey(env, 'OAUTH_KEY_ENCRYPTION_KEY'),
    dataKeyEncryptionKey: keyEncryptionKey(env, 'DATA_KEY_ENCRYPTION_KEY'),
    previousDataKeyEncryptionKeys: keyEncryptionKeys(env, 'DATA_KEY_ENCRYPTION_KEY_PREVIOUS'),
    federation: federation(env),
    mail: mail(env),
    sms: sms(env),
    deliveryWaitMs: integer(env, 'DELIVERY_WAIT_MS', 5000, 0, 60_000),
    http: httpTimeouts(env),
    metricsToken: metricsToken(env),
    redisUrl: optionalUrl(env, 'REDIS_URL', ['redis:', 'rediss:']),
    oauthClientRateLimit: integer(env, 'OAUTH_CLIENT_RATE_LIMIT', 10_000, 1, 1_000_000),
  };
}
