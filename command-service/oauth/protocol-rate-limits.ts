// The rate limits of the OAuth protocol endpoints (token, introspect, revoke), each per source
// address before the client is authenticated (bounding secret guessing and load) and, for
// introspect and revoke, per authenticated client after it (one backend cannot crowd out the
// others). The spec leaves the numbers open ("they do return 429"); ours, per minute:
//
//   token       600 per address  one user's app needs a handful per hour (a code exchange, a
//                                refresh every 15 minutes); a backend behind one address serving
//                                many users stays far below 10 per second on average. Guessing
//                                codes or refresh tokens (256 random bits) is hopeless anyway.
//   introspect  1,200 per address, 3,000 per client: a resource server may introspect on every
//                                request it serves (50 per second), though it should cache.
//   revoke      600 per address, 600 per client: sign-outs, rarely more than a few per user.
//
// Every limit has the shared escalating lockouts (15 min, 1 h, 24 h) once a caller ignores a
// whole further window of 429s. Benchmarks and tests raise the token limit through the route
// options.
import { ORG_API_RATE_LIMIT, RateLimiter, type RateLimitPolicy } from '../../shared/http/rate-limit.js';
import type { RateLimitStore } from '../../shared/http/rate-limit-store.js';

const perMinute = (points: number): RateLimitPolicy => Object.freeze({ ...ORG_API_RATE_LIMIT, points, windowSeconds: 60, abuseThreshold: points });

export const TOKEN_ENDPOINT_RATE_LIMIT: RateLimitPolicy = perMinute(600);

export interface ProtocolLimits {
  readonly token: RateLimiter;
  readonly introspectByAddress: RateLimiter;
  readonly introspectByClient: RateLimiter;
  readonly revokeByAddress: RateLimiter;
  readonly revokeByClient: RateLimiter;
}

export function protocolLimits(store: RateLimitStore | undefined, tokenOverrides: Partial<RateLimitPolicy> = {}): ProtocolLimits {
  return {
    token: new RateLimiter('oauth-token', { ...TOKEN_ENDPOINT_RATE_LIMIT, ...tokenOverrides }, store),
    introspectByAddress: new RateLimiter('oauth-introspect', perMinute(1200), store),
    introspectByClient: new RateLimiter('oauth-introspect-client', perMinute(3000), store),
    revokeByAddress: new RateLimiter('oauth-revoke', perMinute(600), store),
    revokeByClient: new RateLimiter('oauth-revoke-client', perMinute(600), store),
  };
}
