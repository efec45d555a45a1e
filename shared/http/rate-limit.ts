// Rate limiting with escalating lockouts (rate-limiter-flexible counters in a RateLimitStore).
//
// The design, kept simple on purpose:
//  * Every request of the bucket consumes one point of a fixed window (organization API:
//    300 per 60 s per source IP). Over the limit the answer is 429 with Retry-After set to the
//    time left in the window. A bucket that counts only failures (the OAuth protocol endpoints'
//    per-address budgets) gives the point of a request that succeeded back (giveBack).
//  * Escalation is for abuse only, and each policy says what abuse is (`escalation`):
//    - 'ignored-429s': a request refused with 429 is a "rejection". A caller that keeps sending
//      while refused, `abuseThreshold` rejections within `abuseWindowSeconds` (default: 300 in
//      10 minutes, i.e. a whole further window's worth of ignored Retry-Afters), is locked out
//      for the next lockout length, 15 minutes the first time, then 1 hour, then 24 hours for
//      every further lockout. For buckets counted before the caller is authenticated.
//    - 'exhaustion': the bucket counts failures (wrong secrets, invalid grants), so spending it
//      all is itself the abuse: the first refusal locks out at the next level, and ignored 429s
//      during the lockout escalate as above.
//    - 'never': back-pressure for an authenticated caller, which is not guessing anything: a 429
//      with Retry-After inside the window and nothing more, however often it comes back.
//    Hammering during a lockout counts as rejections too, so it escalates. Only the one rejection
//    that crosses the threshold locks out: a burst of a hundred escalates one level, not a hundred.
//  * The lockout may be aimed narrower than the bucket (`lockKey`): the user API's bucket is the
//    user's, its lockouts are the (user, client) pair's, so one app hammering does not lock the
//    user out of their other apps beyond the minute.
//  * Lockout levels are remembered for `lockoutMemorySeconds` (7 days) after the first lockout.
//  * Counters are named `{name}:req|rej|lock|block:{key}`; every lockout has a `block` one, so an
//    operator can list and lift lockouts (rate-limit-admin.ts, `npx guestpass limits`).
//  * Where the counts live is the store's business (rate-limit-store.ts): in this process for the
//    tests, in PostgreSQL (or Redis) for `npm start` and every instance of the production services.
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { RateLimitedError } from '../errors.js';
import { clientIp, rateLimitSource } from './client-ip.js';
import type { HttpContext, HttpMiddleware } from './http-state.js';
import { rateLimitHeaders } from './rate-limit-headers.js';
import { memoryRateLimitStore, type RateLimitStore } from './rate-limit-store.js';

export interface RateLimitPolicy {
  /** Requests allowed per window and source. */
  readonly points: number;
  readonly windowSeconds: number;
  /** What earns an escalating lockout (see the header). */
  readonly escalation: 'ignored-429s' | 'exhaustion' | 'never';
  /** Rejected requests within abuseWindowSeconds that trigger a lockout. */
  readonly abuseThreshold: number;
  readonly abuseWindowSeconds: number;
  /** Length of the 1st, 2nd, 3rd (and every later) lockout. */
  readonly lockoutSeconds: readonly number[];
  readonly lockoutMemorySeconds: number;
}

/**
 * The spec's organization API limit: 300 requests per minute per source IP, with the spec's
 * escalating lockouts for a source that ignores the 429s. It is counted before the API key is
 * checked (a wrong key costs the same point, so guessing keys is bounded by it too), hence per
 * address and escalating: a source that sends a further minute's worth of requests while refused
 * is not an integration respecting Retry-After.
 */
export const ORG_API_RATE_LIMIT: RateLimitPolicy = Object.freeze({
  points: 300,
  windowSeconds: 60,
  escalation: 'ignored-429s',
  abuseThreshold: 300,
  abuseWindowSeconds: 600,
  lockoutSeconds: Object.freeze([15 * 60, 60 * 60, 24 * 60 * 60]),
  lockoutMemorySeconds: 7 * 24 * 60 * 60,
});

export interface LockoutNotice {
  readonly key: string;
  readonly level: number;
  readonly seconds: number;
}

/** The RateLimit headers of an answer that passed the limit (the 429 ones are the error middleware's). */
export function setRateLimitHeaders(ctx: Pick<HttpContext, 'set'>, name: string, policy: RateLimitPolicy, remaining: number, resetSeconds: number): void {
  ctx.set(rateLimitHeaders({ policy: name, limit: policy.points, windowSeconds: policy.windowSeconds, remaining, resetSeconds }));
}

/**
 * How far two readings of one window's end may differ and still be the same window: the store
 * answers with the time left, read on either side of a round trip. Far below a window's length.
 */
export const windowSlackMs = (policy: RateLimitPolicy) => Math.min(1000, (policy.windowSeconds * 1000) / 10);

/** Lockout levels count far past any real level; the column is a 32-bit integer. */
const LEVEL_CEILING = 1_000_000;

export interface TakeOptions {
  /** What a lockout is aimed at, when narrower than the bucket's key. */
  readonly lockKey?: string;
  /** Hears about a caller being locked out (for a warning log line). */
  readonly onLockout?: (notice: LockoutNotice) => void;
}

export class RateLimiter {
  private readonly requests: RateLimiterAbstract;
  private readonly rejections: RateLimiterAbstract;
  private readonly lockouts: RateLimiterAbstract;
  private readonly blocks: RateLimiterAbstract;

  constructor(
    readonly name: string,
    readonly policy: RateLimitPolicy = ORG_API_RATE_LIMIT,
    store: RateLimitStore = memoryRateLimitStore(),
  ) {
    this.requests = store.counter({ keyPrefix: `${name}:req`, points: policy.points, durationSeconds: policy.windowSeconds });
    this.rejections = store.counter({ keyPrefix: `${name}:rej`, points: policy.abuseThreshold, durationSeconds: policy.abuseWindowSeconds });
    this.lockouts = store.counter({ keyPrefix: `${name}:lock`, points: LEVEL_CEILING, durationSeconds: policy.lockoutMemorySeconds });
    // Lockouts aimed at a lockKey other than the bucket's key; written only by block().
    this.blocks = store.counter({ keyPrefix: `${name}:block`, points: 1, durationSeconds: policy.lockoutMemorySeconds });
  }

  /**
   * Takes one point for `key`. Resolves with what is left and when the window ends (`resetMs`
   * from now, `resetSeconds` rounded up); rejects with RateLimitedError.
   */
  async take(key: string, options: TakeOptions = {}): Promise<{ remaining: number; resetSeconds: number; resetMs: number }> {
    const lockKey = options.lockKey ?? key;
    // The point and the lockout are asked for together: one store round trip of waiting, not two.
    const consumed = this.requests.consume(key).then(
      (res) => ({ res, refused: null }),
      (error: unknown) => {
        if (!(error instanceof RateLimiterRes)) throw error;
        return { res: null, refused: error };
      },
    );
    // (A policy that never escalates never writes a block.)
    const blocked = lockKey === key || this.policy.escalation === 'never' ? null : await this.blocks.get(lockKey);
    const { res, refused } = await consumed;
    if (blocked !== null && blocked.msBeforeNext > 0) {
      // A locked-out pair does not spend the bucket its key shares with the others.
      if (res !== null) await this.requests.reward(key);
      return this.refuse(lockKey, blocked.msBeforeNext, this.blocks, options);
    }
    if (refused !== null) {
      // The one request that finds a 'exhaustion' budget spent (its count one past the budget; a
      // lockout resets the count to that, so the requests refused after it are further on) locks out.
      const exhausted = this.policy.escalation === 'exhaustion' && refused.consumedPoints === this.policy.points + 1;
      return this.refuse(lockKey, refused.msBeforeNext, lockKey === key ? this.requests : this.blocks, options, exhausted);
    }
    return { remaining: res!.remainingPoints, resetSeconds: Math.ceil(res!.msBeforeNext / 1000), resetMs: res!.msBeforeNext };
  }

  /** Counts the rejection, locks out the caller that crossed the abuse threshold, and throws the 429. */
  private async refuse(lockKey: string, msBeforeNext: number, lockIn: RateLimiterAbstract, options: TakeOptions, exhausted = false): Promise<never> {
    const refusal = (seconds: number) => new RateLimitedError(seconds, this.policy.points, this.policy.windowSeconds, this.name);
    // Back-pressure: the caller is told when the window turns, nothing is remembered.
    if (this.policy.escalation === 'never') throw refusal(Math.ceil(msBeforeNext / 1000));
    if (exhausted) throw refusal(await this.lockOut(lockKey, lockIn, options));
    let retryAfterSeconds = Math.ceil(msBeforeNext / 1000);
    try {
      await this.rejections.consume(lockKey);
    } catch (abuse) {
      if (!(abuse instanceof RateLimiterRes)) throw abuse;
      if (abuse.consumedPoints === this.policy.abuseThreshold + 1) retryAfterSeconds = await this.lockOut(lockKey, lockIn, options);
    }
    throw refusal(retryAfterSeconds);
  }

  /** Raises `lockKey`'s lockout level and blocks it for that level's length (in seconds, returned). */
  private async lockOut(lockKey: string, lockIn: RateLimiterAbstract, options: TakeOptions): Promise<number> {
    const level = (await this.lockouts.penalty(lockKey, 1)).consumedPoints;
    const seconds = this.policy.lockoutSeconds[Math.min(level, this.policy.lockoutSeconds.length) - 1] ?? 24 * 60 * 60;
    await lockIn.block(lockKey, seconds);
    // A lockout in the bucket's own counter is also written as a block: what `limits list` reads.
    if (lockIn !== this.blocks) await this.blocks.block(lockKey, seconds);
    await this.rejections.delete(lockKey);
    options.onLockout?.({ key: lockKey, level, seconds });
    return seconds;
  }

  /**
   * Gives back points requests took (a budget that counts failures only, after requests that did
   * not fail). Not awaited by callers: the answer need not wait for the store.
   *
   * With `windowEndsAt` (epoch ms, as take's resetMs told it), the points belong to that window
   * only: when the counter is in another one by now (a lockout, which outlasts any window, or a
   * later window, which does not count them) the give-back is undone at once, so it neither
   * shortens a lockout nor credits a window that never counted them.
   */
  async giveBack(key: string, points = 1, windowEndsAt?: number): Promise<void> {
    const res = await this.requests.reward(key, points);
    if (windowEndsAt === undefined) return;
    const endsAt = Date.now() + res.msBeforeNext;
    if (Math.abs(endsAt - windowEndsAt) > windowSlackMs(this.policy)) await this.requests.penalty(key, points);
  }

  /** Takes a point for `key` within a request; its answer carries the RateLimit headers. */
  async admit(ctx: Pick<HttpContext, 'set'>, key: string, options: TakeOptions = {}): Promise<void> {
    const { remaining, resetSeconds } = await this.take(key, options);
    setRateLimitHeaders(ctx, this.name, this.policy, remaining, resetSeconds);
  }

  /**
   * Middleware keyed by source IP for requests under `pathPrefix` (all when omitted); answers
   * that pass carry the current RateLimit headers.
   */
  middleware(options: { trustProxy: boolean; pathPrefix?: string }): HttpMiddleware {
    const prefix = options.pathPrefix ?? '/';
    return async (ctx, next) => {
      if (!ctx.path.startsWith(prefix)) return next();
      const ip = rateLimitSource(clientIp(ctx, options.trustProxy));
      await this.admit(ctx, ip, {
        onLockout: (notice) =>
          ctx.state.log.warn({ ip, bucket: this.name, level: notice.level, seconds: notice.seconds }, 'source locked out after sustained rate-limit abuse'),
      });
      await next();
    };
  }
}

/** The organization API, the bucket ORG_API_RATE_LIMIT applies to. */
export const ORG_API_PREFIX = '/api/v1/org/';
