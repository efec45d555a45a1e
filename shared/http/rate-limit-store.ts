// Where the rate limits and failure throttles count (rate-limiter-flexible counters).
//
//  * memory: this process only. Right for the embedded default, which is one process: both
//    apps are given one store, and a counter is one per name there, so the organization API is
//    one bucket whichever app a request reaches.
//  * postgres: every instance counts in one UNLOGGED table (migration 013), so two replicas
//    allow 300 per minute together, not 600, and a lockout outlives a restart. When the database
//    is slow (past `timeoutMs`) or down, an in-memory insurance counter answers instead: the
//    limits hold per process meanwhile (fail open, not closed: the sign-in must not go down with
//    the counters), and a warning says so.
//  * redis (REDIS_URL): the same, in Redis, for deployments that have one.
import { Redis as IORedis, type Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRedis, RLWrapperTimeouts, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Knex } from 'knex';
import type { Logger } from '../logger.js';

export interface CounterOptions {
  /** The counter's name: every key is stored as `{keyPrefix}:{key}`. */
  readonly keyPrefix: string;
  readonly points: number;
  readonly durationSeconds: number;
}

export interface RateLimitStore {
  /** Whether every instance sees the same counts. */
  readonly shared: boolean;
  counter(options: CounterOptions): RateLimiterAbstract;
}

/** One counter per name and policy: every limiter of one name in a store shares its counts. */
function onePerName(make: (counter: CounterOptions, first: boolean) => RateLimiterAbstract): RateLimitStore['counter'] {
  const counters = new Map<string, RateLimiterAbstract>();
  return (counter) => {
    const id = `${counter.keyPrefix}|${counter.points}|${counter.durationSeconds}`;
    let made = counters.get(id);
    if (made === undefined) {
      made = make(counter, counters.size === 0);
      counters.set(id, made);
    }
    return made;
  };
}

/** Counts in this process. */
export function memoryRateLimitStore(): RateLimitStore {
  return {
    shared: false,
    counter: onePerName(({ keyPrefix, points, durationSeconds }) => new RateLimiterMemory({ keyPrefix, points, duration: durationSeconds })),
  };
}

export const RATE_LIMIT_TABLE = 'rate_limit_counters';
/** Past this, a counter answers from the in-memory insurance (a limit must not slow every request). */
export const DEFAULT_STORE_TIMEOUT_MS = 250;
const INSURANCE_WARNING_INTERVAL_MS = 60_000;

/**
 * Unnamed statements only: behind a transaction-pooling PgBouncer consecutive queries run on
 * different server connections, where a statement prepared by name on another one does not exist.
 * (Parsing these one-line statements costs microseconds.)
 */
class UnnamedStatementPostgres extends RateLimiterPostgres {
  constructor(options: ConstructorParameters<typeof RateLimiterPostgres>[0]) {
    super(options);
    const self = this as unknown as { _query(q: { name?: string; text: string; values: unknown[] }): Promise<unknown> };
    const query = self._query.bind(this);
    self._query = (q) => query({ text: q.text, values: q.values });
  }
}

export interface SharedRateLimitStoreOptions {
  readonly log: Logger;
  readonly timeoutMs?: number;
  /** Called whenever the insurance answers (a metric counts it). */
  readonly onInsurance?: () => void;
}

/**
 * A store whose counters live in a shared service: each wrapped with a timeout and an in-memory
 * insurance counter (one per name and policy, like the shared ones).
 */
function insuredStore(
  backend: string,
  options: SharedRateLimitStoreOptions,
  sharedCounter: (counter: CounterOptions, first: boolean) => RateLimiterAbstract,
): RateLimitStore {
  let lastWarning = 0;
  const insured = () => {
    options.onInsurance?.();
    const now = Date.now();
    if (now - lastWarning < INSURANCE_WARNING_INTERVAL_MS) return;
    lastWarning = now;
    options.log.warn(`the rate-limit counters in ${backend} are slow or unreachable: counting in this process meanwhile`);
  };
  return {
    shared: true,
    counter: onePerName((counter, first) => {
      const { keyPrefix, points, durationSeconds } = counter;
      const insurance = new InsuranceCounter({ keyPrefix, points, duration: durationSeconds }, insured);
      const limiter = sharedCounter(counter, first);
      return new RLWrapperTimeouts({ limiter, timeoutMs: options.timeoutMs ?? DEFAULT_STORE_TIMEOUT_MS, insuranceLimiter: insurance });
    }),
  };
}

/** Counts in PostgreSQL, shared by every instance; `db` is the service's own knex pool. */
export function postgresRateLimitStore(db: Knex, options: SharedRateLimitStoreOptions): RateLimitStore {
  return insuredStore('PostgreSQL', options, ({ keyPrefix, points, durationSeconds }, first) =>
    new UnnamedStatementPostgres({
      storeClient: db,
      storeType: 'knex',
      tableName: RATE_LIMIT_TABLE,
      tableCreated: true,
      // One sweeper per store is enough: every counter shares the table.
      clearExpiredByTimeout: first,
      keyPrefix,
      points,
      duration: durationSeconds,
    }),
  );
}

/**
 * Counts in Redis (REDIS_URL), shared by every instance; keys expire by themselves. The client
 * should not queue commands while disconnected (`enableOfflineQueue: false`), so that a Redis
 * that is down is noticed at once and the insurance answers.
 */
export function redisRateLimitStore(client: Redis, options: SharedRateLimitStoreOptions): RateLimitStore {
  return insuredStore('Redis', options, ({ keyPrefix, points, durationSeconds }) =>
    new RateLimiterRedis({ storeClient: client, rejectIfRedisNotReady: true, keyPrefix: `guestpass:${keyPrefix}`, points, duration: durationSeconds }),
  );
}

/** An in-memory counter that reports each use: it only answers when the store did not. */
class InsuranceCounter extends RateLimiterMemory {
  constructor(
    options: ConstructorParameters<typeof RateLimiterMemory>[0],
    private readonly onUse: () => void,
  ) {
    super(options);
  }

  override consume(...args: Parameters<RateLimiterMemory['consume']>) {
    this.onUse();
    return super.consume(...args);
  }

  override penalty(...args: Parameters<RateLimiterMemory['penalty']>) {
    this.onUse();
    return super.penalty(...args);
  }

  override reward(...args: Parameters<RateLimiterMemory['reward']>) {
    this.onUse();
    return super.reward(...args);
  }

  override block(...args: Parameters<RateLimiterMemory['block']>) {
    this.onUse();
    return super.block(...args);
  }

  override get(...args: Parameters<RateLimiterMemory['get']>) {
    this.onUse();
    return super.get(...args);
  }

  override delete(...args: Parameters<RateLimiterMemory['delete']>) {
    this.onUse();
    return super.delete(...args);
  }
}

/**
 * The store of a service run on its own (one of several instances): Redis when `redisUrl` is
 * set, else the service's PostgreSQL. Waits a moment for Redis to connect, so the first requests
 * count where the others do; a Redis that is down is the insurance's business, not a failed start.
 */
export async function sharedRateLimitStore(
  redisUrl: string | null,
  db: Knex,
  options: SharedRateLimitStoreOptions & { readonly connectWaitMs?: number },
): Promise<{ store: RateLimitStore; close(): Promise<void> }> {
  if (redisUrl === null) return { store: postgresRateLimitStore(db, options), close: async () => undefined };
  const client = new IORedis(redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  // A connection error is the insurance's business (and its warning); without a listener ioredis would log it.
  client.on('error', () => undefined);
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, options.connectWaitMs ?? 2000);
    client.once('ready', () => (clearTimeout(timer), resolve()));
  });
  return { store: redisRateLimitStore(client, options), close: async () => client.disconnect() };
}
