// Caps failed sign-in attempts per key (an email address's hash, a source address, a user, an
// account on one device) in a window. Only failures count, so a user who signs in often is never
// slowed down, while guessing a password or a code is capped.
//
// An attempt is taken before the check and given back when the check succeeds: taking is one
// atomic increment in the store, so however many requests arrive at once, no more than `failures`
// of them per key and window are ever checked. (Counting after the check, as a failure, would let
// every request already in flight through.)
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { RateLimitedError } from '../errors.js';
import { memoryRateLimitStore, type RateLimitStore } from '../http/rate-limit-store.js';

export interface FailurePolicy {
  /** Failures allowed per key and window. */
  readonly failures: number;
  readonly windowSeconds: number;
}

export class FailureThrottle {
  private readonly counter: RateLimiterAbstract;

  constructor(
    readonly name: string,
    readonly policy: FailurePolicy,
    store: RateLimitStore = memoryRateLimitStore(),
  ) {
    this.counter = store.counter({ keyPrefix: name, points: policy.failures, durationSeconds: policy.windowSeconds });
  }

  /** Takes one attempt of `key`; throws RateLimitedError (429) when `key` has none left in the window. */
  async take(key: string): Promise<void> {
    try {
      await this.counter.consume(key);
    } catch (error) {
      if (!(error instanceof RateLimiterRes)) throw error;
      throw new RateLimitedError(Math.ceil(error.msBeforeNext / 1000), this.policy.failures, this.policy.windowSeconds, this.name);
    }
  }

  /** Gives back an attempt whose check succeeded. */
  async giveBack(key: string): Promise<void> {
    await this.counter.reward(key, 1);
  }
}

/** One throttle and the key an attempt is counted under. */
export type AttemptKey = readonly [FailureThrottle, string];

/** Attempts taken under several throttles at once (a source address and an account, say). */
export interface Attempts {
  /** The check succeeded: every attempt goes back. */
  succeeded(): Promise<void>;
}

/**
 * Takes an attempt under every key, or none: when one throttle refuses, the attempts taken under
 * the others go back (the request is not checked) and its RateLimitedError is thrown.
 */
export async function takeAttempts(keys: readonly AttemptKey[]): Promise<Attempts> {
  const taken = await Promise.allSettled(keys.map(([throttle, key]) => throttle.take(key)));
  const refused = taken.find((t): t is PromiseRejectedResult => t.status === 'rejected');
  const giveBack = () => Promise.all(keys.filter((_, i) => taken[i]!.status === 'fulfilled').map(([throttle, key]) => throttle.giveBack(key)));
  if (refused !== undefined) {
    await giveBack();
    throw refused.reason;
  }
  return { succeeded: async () => void (await giveBack()) };
}
