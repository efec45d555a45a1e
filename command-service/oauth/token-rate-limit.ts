// The token endpoint's rate limit: per source IP, in this process (shared/http/rate-limit.ts).
//
// Policy: 600 requests per minute per IP, with the shared escalating lockouts (15 min, 1 h,
// 24 h) once a source ignores a whole further window of 429s. One user's app needs a handful
// of requests per hour (a code exchange, then a refresh every 15 minutes), and a confidential
// backend behind one address serving many users stays far below 10 per second on average;
// guessing codes or refresh tokens (256 random bits each) is hopeless anyway, so the limit is
// about load, not about guessing. Benchmarks and tests raise it through the route options.
import { ORG_API_RATE_LIMIT, RateLimiter, type RateLimitPolicy } from '../../shared/http/rate-limit.js';

export const TOKEN_ENDPOINT_RATE_LIMIT: RateLimitPolicy = Object.freeze({
  ...ORG_API_RATE_LIMIT,
  points: 600,
  windowSeconds: 60,
  abuseThreshold: 600,
});

export function tokenEndpointRateLimiter(overrides: Partial<RateLimitPolicy> = {}): RateLimiter {
  return new RateLimiter('oauth-token', { ...TOKEN_ENDPOINT_RATE_LIMIT, ...overrides });
}
