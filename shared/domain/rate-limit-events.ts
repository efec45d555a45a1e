// Events of the rate limits' operators, part of the DomainEvent union in events.ts:
// * `RateLimitLockoutCleared`: an operator lifted a lockout (`npx guestpass limits clear`), the
//   window's count and the remembered level with it. Stream: `rate-limit-lockouts` (one, for the
//   whole service: operators clear a handful a year).
// The counters themselves are not events (they live in PostgreSQL or Redis and expire); only the
// operator's decision to lift one is a fact worth keeping. The key is kept as its SHA-256, not as
// the address: the log is kept for good, and an auditor who knows the address can still match it.
import type { AnySchemaObject } from 'ajv/dist/2020.js';

export const RATE_LIMIT_LOCKOUTS_STREAM = 'rate-limit-lockouts';
/** A limit's name as RateLimiter and FailureThrottle are given it (`oauth-introspect`, `org-api`). */
export const RATE_LIMIT_POLICY_PATTERN = '^[a-z0-9][a-z0-9-]{0,63}$';

export type RateLimitLockoutCleared = {
  type: 'RateLimitLockoutCleared';
  data: {
    policy: string;
    /** SHA-256 (hex) of the key: an address (IPv6 per /64), a client id, `user:{id}`. */
    keySha256: string;
    /** The lockout level that was lifted; null when the key was not locked out (its counts were still cleared). */
    level: number | null;
    /** The operator who ran the command, as they gave it or as the system names them. */
    clearedBy: string;
  };
};

export type RateLimitDomainEvent = RateLimitLockoutCleared;
export type RateLimitDomainEventType = RateLimitDomainEvent['type'];

type PropertiesOf<D> = { readonly [K in keyof D]-?: AnySchemaObject };
type DataOf<T extends RateLimitDomainEventType> = Extract<RateLimitDomainEvent, { type: T }>['data'];

export const rateLimitEventCatalogue: {
  readonly [T in RateLimitDomainEventType]: { readonly version: number; readonly properties: PropertiesOf<DataOf<T>> };
} = {
  RateLimitLockoutCleared: {
    version: 1,
    properties: {
      policy: { type: 'string', pattern: RATE_LIMIT_POLICY_PATTERN },
      keySha256: { type: 'string', pattern: '^[0-9a-f]{64}$' },
      level: { type: ['integer', 'null'], minimum: 1, maximum: 1_000_000 },
      clearedBy: { type: 'string', minLength: 1, maxLength: 100 },
    },
  },
};
