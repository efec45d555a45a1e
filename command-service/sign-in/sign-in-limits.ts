// The rate limits of the browser side of the authorization server. The spec leaves their numbers
// open ("they do return 429"); these are ours:
//
//   * requests per source IP, with the organization API's escalating lockouts for sources that
//     keep hammering while refused: authorize 300/min, logout 120/min, the sign-in pages' form
//     posts 300/min (generous: a whole office may sit behind one address; they bound the scrypt
//     work an address can ask of us);
//   * failed attempts, which are what guessing costs: 10 wrong passwords per email address and
//     100 per source IP per 15 minutes, 10 wrong second-factor codes per user per 15 minutes (a
//     6-digit code with a 3-step window then holds for years).
// Counted in this process's memory, per app instance (each gateway of the test stack has its own).
import { ORG_API_RATE_LIMIT, RateLimiter, type RateLimitPolicy } from '../../shared/http/rate-limit.js';
import { FailureThrottle } from '../../shared/sign-in/failure-throttle.js';

const perMinute = (points: number): RateLimitPolicy => ({ ...ORG_API_RATE_LIMIT, points, windowSeconds: 60, abuseThreshold: points });

export interface SignInLimits {
  readonly authorize: RateLimiter;
  readonly logout: RateLimiter;
  readonly forms: RateLimiter;
  readonly passwordFailuresByEmail: FailureThrottle;
  readonly passwordFailuresByIp: FailureThrottle;
  readonly secondFactorFailuresByUser: FailureThrottle;
}

export function signInLimits(): SignInLimits {
  return {
    authorize: new RateLimiter('oauth-authorize', perMinute(300)),
    logout: new RateLimiter('oauth-logout', perMinute(120)),
    forms: new RateLimiter('sign-in-forms', perMinute(300)),
    passwordFailuresByEmail: new FailureThrottle('password-failures-email', { failures: 10, windowSeconds: 15 * 60 }),
    passwordFailuresByIp: new FailureThrottle('password-failures-ip', { failures: 100, windowSeconds: 15 * 60 }),
    secondFactorFailuresByUser: new FailureThrottle('second-factor-failures', { failures: 10, windowSeconds: 15 * 60 }),
  };
}
