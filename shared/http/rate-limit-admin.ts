// What an operator sees of the shared rate-limit counters and how they lift a lockout
// (`npx guestpass limits list|clear`), in PostgreSQL and in Redis alike.
//
// RateLimiter names its counters `{policy}:req|rej|lock|block:{key}` and writes a `block` counter
// for every lockout it imposes (until: the counter's expiry), beside the `lock` counter that
// remembers the level; a FailureThrottle's counter is `{policy}:{key}`. Clearing deletes all of
// them for one key: the lockout, the window's count, the ignored 429s and the remembered level, so
// the key starts again from nothing. Every instance reads the shared store on each request, so a
// cleared lockout is lifted everywhere at once.
import type { Redis } from 'ioredis';
import type { Knex } from 'knex';
import { RATE_LIMIT_TABLE } from './rate-limit-store.js';

export interface Lockout {
  /** The limit's name (`oauth-introspect`, `org-api`, ...). */
  readonly policy: string;
  /** What it counts: an address (an IPv6 one per /64), a client id, `user:{id}`. */
  readonly key: string;
  /** 1 for the first lockout (15 min), 2 for the second (1 h), 3 and on (24 h). */
  readonly level: number;
  readonly until: Date;
}

export interface RateLimitAdmin {
  /** The lockouts in force now, soonest to end first. */
  lockouts(): Promise<Lockout[]>;
  /** The lockout of `key` under `policy`, if one is in force. */
  lockout(policy: string, key: string): Promise<Lockout | null>;
  /** Deletes every counter of `key` under `policy`; the number of counters there were. */
  clear(policy: string, key: string): Promise<number>;
}

const RATE_LIMITER_KINDS = ['req', 'rej', 'lock', 'block'] as const;
const BLOCK = ':block:';

/** Every counter name one key may have under one policy (rate-limit.ts, failure-throttle.ts). */
export function counterNames(policy: string, key: string): string[] {
  return [...RATE_LIMITER_KINDS.map((kind) => `${policy}:${kind}:${key}`), `${policy}:${key}`];
}

/** `{policy}:block:{key}` → policy and key (policy names hold no colon; keys may: IPv6, user:1). */
function parseBlock(name: string): { policy: string; key: string } | null {
  const at = name.indexOf(BLOCK);
  if (at <= 0 || name.slice(0, at).includes(':')) return null;
  return { policy: name.slice(0, at), key: name.slice(at + BLOCK.length) };
}

const byUntil = (a: Lockout, b: Lockout) => a.until.getTime() - b.until.getTime();

/** The counters in the services' PostgreSQL table (migration 013). */
export function postgresRateLimitAdmin(db: Knex): RateLimitAdmin {
  async function levels(names: string[]): Promise<Map<string, number>> {
    if (names.length === 0) return new Map();
    const rows: { key: string; points: number }[] = await db(RATE_LIMIT_TABLE).select('key', 'points').whereIn('key', names);
    return new Map(rows.map((r) => [r.key, r.points]));
  }
  async function find(where: (q: Knex.QueryBuilder) => Knex.QueryBuilder): Promise<Lockout[]> {
    const rows: { key: string; expire: string }[] = await where(db(RATE_LIMIT_TABLE).select('key', 'expire').where('expire', '>', Date.now()));
    const blocks = rows.flatMap((r) => {
      const parsed = parseBlock(r.key);
      return parsed ? [{ ...parsed, until: new Date(Number(r.expire)) }] : [];
    });
    const known = await levels(blocks.map((b) => `${b.policy}:lock:${b.key}`));
    return blocks.map((b) => ({ ...b, level: known.get(`${b.policy}:lock:${b.key}`) ?? 1 })).sort(byUntil);
  }
  return {
    lockouts: () => find((q) => q.andWhere('key', 'like', `%${BLOCK}%`)),
    lockout: async (policy, key) => (await find((q) => q.andWhere('key', `${policy}${BLOCK}${key}`)))[0] ?? null,
    clear: (policy, key) => db(RATE_LIMIT_TABLE).whereIn('key', counterNames(policy, key)).delete(),
  };
}

/**
 * The counters in Redis (REDIS_URL), named `guestpass:{counter}` (rate-limit-store.ts). `client`
 * may carry an ioredis keyPrefix (tests give each run one): SCAN matches and answers whole keys,
 * so it is added to the pattern and taken off the answers.
 */
export function redisRateLimitAdmin(client: Redis): RateLimitAdmin {
  const namespace = `${client.options.keyPrefix ?? ''}guestpass:`;
  const name = (counter: string) => `guestpass:${counter}`;

  async function describe(blocks: { policy: string; key: string }[]): Promise<Lockout[]> {
    const found = await Promise.all(
      blocks.map(async ({ policy, key }) => {
        const [ttl, level] = await Promise.all([client.pttl(name(`${policy}${BLOCK}${key}`)), client.get(name(`${policy}:lock:${key}`))]);
        return ttl > 0 ? [{ policy, key, level: Number(level ?? 1), until: new Date(Date.now() + ttl) }] : [];
      }),
    );
    return found.flat().sort(byUntil);
  }
  return {
    async lockouts() {
      const blocks: { policy: string; key: string }[] = [];
      let cursor = '0';
      do {
        const [next, keys] = await client.scan(cursor, 'MATCH', `${namespace}*${BLOCK}*`, 'COUNT', 1000);
        cursor = next;
        for (const key of keys) {
          const parsed = parseBlock(key.slice(namespace.length));
          if (parsed) blocks.push(parsed);
        }
      } while (cursor !== '0');
      return describe(blocks);
    },
    lockout: async (policy, key) => (await describe([{ policy, key }]))[0] ?? null,
    clear: (policy, key) => client.del(...counterNames(policy, key).map(name)),
  };
}
