// Per-source-IP rate limiting, in memory (rate-limiter-flexible), with escalating lockouts.
//
// The design, kept simple on purpose:
//  * Every request of the bucket consumes one point of a fixed window (organization API:
//    300 per 60 s per source IP). Over the limit the answer is 429 with Retry-After set to the
//    time left in the window.
//  * A request refused with 429 is a "rejection". A source that keeps sending while refused,
//    `abuseThreshold` rejections within `abuseWindowSeconds` (default: 300 in 10 minutes, i.e. a
//    whole further window's worth of ignored 429s), is locked out: its bucket is blocked for the
//    next lockout length, 15 minutes the first time, then 1 hour, then 24 hours for every
//    further lockout. Hammering during a lockout counts as rejections too, so it escalates.
//  * Lockout levels are remembered for `lockoutMemorySeconds` (7 days) after the first lockout.
//  * Counters live in this process only: each process (or replica) counts on its own. The
//    embedded runner passes ONE limiter to both apps so the organization API is one bucket.
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { RateLimitedError } from '../errors.js';
import { clientIp, rateLimitSource } from './client-ip.js';
import type { HttpContext, HttpMiddleware } from './http-state.js';

export interface RateLimitPolicy {
  /** Requests allowed per window and source. */
  readonly points: number;
  readonly windowSeconds: number;
  /** Rejected requests within abuseWindowSeconds that trigger a lockout. */
  readonly abuseThreshold: number;
  readonly abuseWindowSeconds: number;
  /** Length of the 1st, 2nd, 3rd (and every later) lockout. */
  readonly lockoutSeconds: readonly number[];
  readonly lockoutMemorySeconds: number;
}

/** The spec's organization API limit: 300 requests per minute per source IP. */
export const ORG_API_RATE_LIMIT: RateLimitPolicy = Object.freeze({
  points: 300,
  windowSeconds: 60,
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
export function setRateLimitHeaders(ctx: Pick<HttpContext, 'set'>, policy: RateLimitPolicy, remaining: number, resetSeconds: number): void {
  ctx.set('RateLimit', `limit=${policy.points}, remaining=${remaining}, reset=${resetSeconds}`);
  ctx.set('RateLimit-Policy', `${policy.points};w=${policy.windowSeconds}`);
  ctx.set('RateLimit-Limit', String(policy.points));
  ctx.set('RateLimit-Remaining', String(remaining));
  ctx.set('RateLimit-Reset', String(resetSeconds));
}

export class RateLimiter {
  private readonly requests: RateLimiterMemory;
  private readonly rejections: RateLimiterMemory;
  private readonly lockouts: RateLimiterMemory;

  constructor(
    readonly name: string,
    readonly policy: RateLimitPolicy = ORG_API_RATE_LIMIT,
  ) {
    this.requests = new RateLimiterMemory({ keyPrefix: `${name}:req`, points: policy.points, duration: policy.windowSeconds });
    this.rejections = new RateLimiterMemory({
      keyPrefix: `${name}:rej`,
      points: policy.abuseThreshold,
      duration: policy.abuseWindowSeconds,
    });
    this.lockouts = new RateLimiterMemory({
      keyPrefix: `${name}:lock`,
      points: Number.MAX_SAFE_INTEGER,
      duration: policy.lockoutMemorySeconds,
    });
  }

  /**
   * Takes one point for `key`. Resolves with what is left; rejects with RateLimitedError.
   * `onLockout` hears about a source being locked out (for a warning log line).
   */
  async take(key: string, onLockout?: (notice: LockoutNotice) => void): Promise<{ remaining: number; resetSeconds: number }> {
    try {
      const res = await this.requests.consume(key);
      return { remaining: res.remainingPoints, resetSeconds: Math.ceil(res.msBeforeNext / 1000) };
    } catch (error) {
      if (!(error instanceof RateLimiterRes)) throw error;
      let retryAfterSeconds = Math.ceil(error.msBeforeNext / 1000);
      try {
        await this.rejections.consume(key);
      } catch (abuse) {
        if (!(abuse instanceof RateLimiterRes)) throw abuse;
        const level = (await this.lockouts.penalty(key, 1)).consumedPoints;
        const seconds = this.policy.lockoutSeconds[Math.min(level, this.policy.lockoutSeconds.length) - 1] ?? 24 * 60 * 60;
        await this.requests.block(key, seconds);
        await this.rejections.delete(key);
        retryAfterSeconds = seconds;
        onLockout?.({ key, level, seconds });
      }
      throw new RateLimitedError(retryAfterSeconds, this.policy.points, this.policy.windowSeconds);
    }
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
      const { remaining, resetSeconds } = await this.take(ip, (notice) =>
        ctx.state.log.warn({ ip, bucket: this.name, level: notice.level, seconds: notice.seconds }, 'source locked out after sustained rate-limit abuse'),
      );
      setRateLimitHeaders(ctx, this.policy, remaining, resetSeconds);
      await next();
    };
  }
}

/** The organization API, the bucket ORG_API_RATE_LIMIT applies to. */
export const ORG_API_PREFIX = '/api/v1/org/';
