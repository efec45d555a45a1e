// `npx guestpass limits ...`: the rate limits' lockouts, from the operator's side (issue 23).
//   limits list                            the lockouts in force: policy, key, level, until
//   limits clear --policy P --key K [--by NAME]
//                                          lifts one at once, with the window's count and the
//                                          remembered level, and records RateLimitLockoutCleared
// Both read the counters where the services count them: Redis when REDIS_URL is set, else the
// PostgreSQL the CLI opens (DATABASE_URL, or the one a running `npm start` uses).
import { createHash, randomUUID } from 'node:crypto';
import os from 'node:os';
import { Redis as IORedis } from 'ioredis';
import type { Config } from '../shared/config.js';
import { schemaVersionOf } from '../shared/domain/event-schemas.js';
import { RATE_LIMIT_LOCKOUTS_STREAM, RATE_LIMIT_POLICY_PATTERN, type RateLimitLockoutCleared } from '../shared/domain/rate-limit-events.js';
import type { EventStore, NewEvent } from '../shared/event-store/event-store.js';
import { postgresRateLimitAdmin, redisRateLimitAdmin, type Lockout, type RateLimitAdmin } from '../shared/http/rate-limit-admin.js';
import type { Runtime } from '../runtime/runtime.js';
import type { Result } from './cli-kit.js';
import { noPositionals, optional, parse, required, UsageError } from './cli-args.js';

export const LIMITS_USAGE = `  limits list   (the rate-limit lockouts in force: policy, key, level, until)
  limits clear --policy P --key K [--by NAME]   (lifts a lockout at once, the window's count included; recorded as an event)`;

const POLICY = new RegExp(RATE_LIMIT_POLICY_PATTERN);

/** Where the services count: Redis when REDIS_URL is set, else the runtime's PostgreSQL. */
async function openAdmin(runtime: Runtime, config: Pick<Config, 'redisUrl'>): Promise<{ admin: RateLimitAdmin; close(): void }> {
  if (config.redisUrl === null) return { admin: postgresRateLimitAdmin(runtime.knex), close: () => undefined };
  const client = new IORedis(config.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await client.connect();
  return { admin: redisRateLimitAdmin(client), close: () => client.disconnect() };
}

const describe = (l: Lockout) => ({ policy: l.policy, key: l.key, level: l.level, until: l.until.toISOString() });

export async function limitsCommand(runtime: Runtime, args: string[], config: Pick<Config, 'redisUrl'>): Promise<Result> {
  const [action, ...rest] = args;
  if (action !== 'list' && action !== 'clear') throw new UsageError(LIMITS_USAGE.trimStart());
  const { values, positionals } = parse(rest, action === 'clear' ? { policy: { type: 'string' }, key: { type: 'string' }, by: { type: 'string' } } : {});
  noPositionals(positionals);
  const { admin, close } = await openAdmin(runtime, config);
  try {
    if (action === 'list') {
      const lockouts = await admin.lockouts();
      const lines = lockouts.map((l) => `${l.policy}\t${l.key}\t${l.level}\t${l.until.toISOString()}`);
      return {
        json: { lockouts: lockouts.map(describe) },
        text: lockouts.length === 0 ? 'no lockouts' : ['policy\tkey\tlevel\tuntil', ...lines].join('\n'),
      };
    }
    const policy = required(values, 'policy');
    if (!POLICY.test(policy)) throw new UsageError(`--policy must be a limit's name (as \`limits list\` shows it), not "${policy}"`);
    const key = required(values, 'key');
    const by = optional(values, 'by') ?? os.userInfo().username;
    const lifted = await admin.lockout(policy, key);
    await recordClear(runtime.store, { policy, keySha256: createHash('sha256').update(key).digest('hex'), level: lifted?.level ?? null, clearedBy: by.slice(0, 100) || 'operator' });
    const removed = await admin.clear(policy, key);
    return {
      json: { policy, key, lifted: lifted ? describe(lifted) : null, counters_removed: removed },
      text: lifted ? `lifted ${policy} lockout of ${key} (level ${lifted.level}, was until ${lifted.until.toISOString()})` : `${policy} ${key}: no lockout in force; ${removed} counter(s) cleared`,
    };
  } finally {
    close();
  }
}

async function recordClear(store: EventStore, data: RateLimitLockoutCleared['data']): Promise<void> {
  const event: NewEvent<'RateLimitLockoutCleared', RateLimitLockoutCleared['data']> = {
    id: randomUUID(),
    type: 'RateLimitLockoutCleared',
    data,
    metadata: {
      correlationId: randomUUID(),
      causationId: null,
      actor: { kind: 'operator' },
      occurredAt: new Date().toISOString(),
      schemaVersion: schemaVersionOf('RateLimitLockoutCleared'),
    },
  };
  await store.appendToStream(RATE_LIMIT_LOCKOUTS_STREAM, [event], 'any');
}
