// The per-address budget of a protocol endpoint that counts failures only (protocol-rate-limits.ts):
// a request takes a point before it is checked and gives it back unless it failed, so however many
// arrive at once no more than the budget are checked, and correct requests cost the address nothing.
//
// A failure is an OAuth error the caller caused (4xx: invalid_client, invalid_grant,
// invalid_request, ...). Not failures: an answer (an inactive token's {"active": false} is a correct
// answer), the authenticated client's own 429 (back-pressure, not guessing), and our own 5xx.
import { clientIp, rateLimitSource } from '../../shared/http/client-ip.js';
import type { HttpMiddleware } from '../../shared/http/http-state.js';
import type { RateLimiter } from '../../shared/http/rate-limit.js';
import { OAuthError } from '../../shared/oauth/oauth-errors.js';

const isFailure = (error: unknown) => error instanceof OAuthError && error.status < 500;

export function failureBudget(limiter: RateLimiter, options: { trustProxy: boolean }): HttpMiddleware {
  return async function countFailures(ctx, next) {
    const source = rateLimitSource(clientIp(ctx, options.trustProxy));
    await limiter.admit(ctx, source, {
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
      // Not awaited: the answer need not wait for the store (which logs its own trouble).
      if (!failed) limiter.giveBack(source).catch((error: unknown) => ctx.state.log.warn({ err: error, bucket: limiter.name }, 'could not give a rate-limit point back'));
    }
  };
}
