// The per-address budget of a protocol endpoint that counts failures only (protocol-rate-limits.ts):
// a request holds a point of the shared count while it is checked and gives it back unless it
// failed, so however many arrive at once (on however many instances) no more than the budget
// are checked, and correct requests cost the address nothing.
//
// A failure is an OAuth error the caller caused (4xx: invalid_client, invalid_grant,
// invalid_request, ...). Not failures: an answer (an inactive token's {"active": false} is a correct
// answer), the authenticated client's own 429 (back-pressure, not guessing), and our own 5xx.
//
// Points are held, not taken and given back per request: a request that ends without failing
// leaves its point with this instance, and the address's next request here uses it without a
// round trip to the store. The points go back once none of the address's requests has been in
// flight here for a moment: a millisecond, or BUSY_LINGER_MS for an address that had requests
// side by side (its clients are about to send their next ones). A busy resource server behind one
// address costs about one store write per request it has in flight at its peak, not two per
// request. The bound is the same: the shared count is every point an instance holds plus every
// failure, each checked request holds one, and a failure spends its point for good. Held points
// are only used in the window that counted them (a margin before its end, for clocks that differ
// a little between instances): in the next one each is taken again. One difference: a lockout set
// by another instance stops this one at its next take, i.e. once the address's requests here
// pause, or its held points are spent by failures, or the window ends, whichever is first; until
// then its requests are checked with points the window already counted, so the number checked
// stays within the budget.
import { clientIp, rateLimitSource } from '../../shared/http/client-ip.js';
import type { HttpContext, HttpMiddleware } from '../../shared/http/http-state.js';
import { setRateLimitHeaders, windowSlackMs, type RateLimiter, type TakeOptions } from '../../shared/http/rate-limit.js';
import { OAuthError } from '../../shared/oauth/oauth-errors.js';
import type { Logger } from '../../shared/logger.js';

/** How long a busy address's points stay after its last request here ends. */
export const BUSY_LINGER_MS = 100;

const isFailure = (error: unknown) => error instanceof OAuthError && error.status < 500;

/** The points this instance holds of one address's budget, in one window of the shared count. */
interface Holding {
  /** When that window ends (epoch ms, this process's clock). */
  readonly windowEndsAt: number;
  /** Points taken in the shared count and not spent by a failure. */
  held: number;
  /** Of those, the ones a request in flight uses. */
  inUse: number;
  /** The most in use at once: an address with requests side by side here is a busy one. */
  peak: number;
  /** When the last request that used it ended, while none does. */
  idleSince: number;
  /** A give-back is waiting for the address to stay quiet. */
  waiting: boolean;
  /** What the store said was left of the budget at the last take. */
  remaining: number;
}

/** The held points of one limiter, by address. */
export class HeldFailurePoints {
  /**
   * Per address, a holding per window: mostly one, two around a window's turn, or while the
   * store is slow and its in-memory insurance answers in a window of its own.
   */
  private readonly holdings = new Map<string, Holding[]>();
  private readonly slackMs: number;

  constructor(
    private readonly limiter: RateLimiter,
    private readonly clock: () => number = Date.now,
  ) {
    this.slackMs = windowSlackMs(limiter.policy);
  }

  /** Addresses with points held here (for tests). */
  get size(): number {
    return this.holdings.size;
  }

  /** A point for one request from `key`: a held one no request uses, else one taken from the store (or a 429). */
  async acquire(ctx: Pick<HttpContext, 'set'>, key: string, options: TakeOptions = {}): Promise<Holding> {
    const now = this.clock();
    const spare = this.holdings.get(key)?.find((h) => h.held > h.inUse && now < h.windowEndsAt - this.slackMs);
    if (spare) {
      spare.inUse++;
      spare.peak = Math.max(spare.peak, spare.inUse);
      this.headers(ctx, spare, now);
      return spare;
    }
    const taken = await this.limiter.take(key, options);
    const at = this.clock();
    const windowEndsAt = at + taken.resetMs;
    let list = this.holdings.get(key);
    if (!list) this.holdings.set(key, (list = []));
    let holding = list.find((h) => Math.abs(h.windowEndsAt - windowEndsAt) <= this.slackMs);
    if (!holding) {
      holding = { windowEndsAt, held: 0, inUse: 0, peak: 0, idleSince: at, waiting: false, remaining: taken.remaining };
      list.push(holding);
    }
    holding.held++;
    holding.inUse++;
    holding.peak = Math.max(holding.peak, holding.inUse);
    holding.remaining = taken.remaining;
    this.headers(ctx, holding, at);
    return holding;
  }

  /** The request that used a point of `holding` is done; a failure spends it. */
  release(key: string, holding: Holding, failed: boolean, log: Logger): void {
    holding.inUse--;
    if (failed) holding.held--;
    if (holding.inUse > 0) return;
    holding.idleSince = this.clock();
    if (!holding.waiting) this.giveBackWhenIdle(key, holding, log);
  }

  /**
   * The answer need not wait: the points go back once the address has had no request here for a
   * moment, unless one arriving meanwhile takes one up again. The moment is longer for a busy
   * address (requests side by side), whose clients are about to send their next ones: its points
   * are not given back and taken again between one batch and the next.
   */
  private giveBackWhenIdle(key: string, holding: Holding, log: Logger): void {
    const linger = holding.peak > 1 ? BUSY_LINGER_MS : 0;
    holding.waiting = true;
    setTimeout(() => {
      holding.waiting = false;
      const list = this.holdings.get(key);
      if (holding.inUse > 0 || !list?.includes(holding)) return; // its next release waits again
      if (this.clock() - holding.idleSince < linger) return this.giveBackWhenIdle(key, holding, log); // in use again meanwhile
      list.splice(list.indexOf(holding), 1);
      if (list.length === 0) this.holdings.delete(key);
      const points = holding.held;
      holding.held = 0;
      // Points of a window that has ended (or is about to) count nowhere any more.
      if (points === 0 || this.clock() >= holding.windowEndsAt - this.slackMs) return;
      this.limiter
        .giveBack(key, points, holding.windowEndsAt)
        .catch((error: unknown) => log.warn({ err: error, bucket: this.limiter.name }, 'could not give rate-limit points back'));
    }, Math.max(0, linger - (this.clock() - holding.idleSince)));
  }

  private headers(ctx: Pick<HttpContext, 'set'>, holding: Holding, now: number): void {
    setRateLimitHeaders(ctx, this.limiter.name, this.limiter.policy, holding.remaining, Math.max(0, Math.ceil((holding.windowEndsAt - now) / 1000)));
  }
}

export function failureBudget(limiter: RateLimiter, options: { trustProxy: boolean }): HttpMiddleware {
  const points = new HeldFailurePoints(limiter);
  return async function countFailures(ctx, next) {
    const source = rateLimitSource(clientIp(ctx, options.trustProxy));
    const holding = await points.acquire(ctx, source, {
      onLockout: (notice) =>
        ctx.state.log.warn({ ip: source, bucket: limiter.name, level: notice.level, seconds: notice.seconds }, 'source locked out after repeated failures'),
    });
    let failed = false;
    try {
      await next();
    } catch (error) {
      failed = isFailure(error);
      throw error;
    } finally {
      points.release(source, holding, failed, ctx.state.log);
    }
  };
}
