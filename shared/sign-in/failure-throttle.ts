// Counts failed sign-in attempts per key (an email address, a source IP, a user) and refuses
// further attempts once a key has used up its failures in the window. Only failures count, so a
// user who signs in often is never slowed down, while guessing a password or a code is capped.
// In this process's memory (rate-limiter-flexible), like the request rate limits.
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { RateLimitedError } from '../errors.js';

export interface FailurePolicy {
  /** Failures allowed per key and window. */
  readonly failures: number;
  readonly windowSeconds: number;
}

export class FailureThrottle {
  private readonly counter: RateLimiterMemory;

  constructor(
    readonly name: string,
    readonly policy: FailurePolicy,
  ) {
    this.counter = new RateLimiterMemory({ keyPrefix: name, points: policy.failures, duration: policy.windowSeconds });
  }

  /** Throws RateLimitedError (429) when `key` has no attempt left in the window. */
  async check(key: string): Promise<void> {
    const used = await this.counter.get(key);
    if (used !== null && used.consumedPoints >= this.policy.failures) {
      throw new RateLimitedError(Math.ceil(used.msBeforeNext / 1000), this.policy.failures, this.policy.windowSeconds);
    }
  }

  /** Records one failure of `key`. */
  async fail(key: string): Promise<void> {
    await this.counter.penalty(key, 1);
  }
}
