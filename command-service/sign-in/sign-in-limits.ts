// The rate limits of the browser side of the authorization server. The spec leaves their numbers
// open ("they do return 429"); these are ours:
//
//   * requests per source address, with the organization API's escalating lockouts for sources
//     that keep hammering while refused: authorize 300/min, logout 120/min, the sign-in pages'
//     form posts 300/min (generous: a whole office may sit behind one address; they bound the
//     scrypt work an address can ask of us). These escalate on ignored 429s ('ignored-429s')
//     because nobody is authenticated yet on these routes, and people at browsers who are shown a
//     429 page do not send a further window's worth of requests: only a script does;
//   * failed attempts, which are what guessing costs, per 15 minutes: 10 wrong passwords per
//     account (its email address) and 100 per source address; a browser that entered the
//     account's password before (its device cookie) has 5 of its own per account instead of the
//     account's 10, so an attacker who spends those does not lock the owner out; 10 wrong
//     second-factor codes per user (a 6-digit code with a 3-step window then holds for years).
//     These count failures only, so a user who signs in often is never slowed; they do not
//     escalate: the 15-minute window is already longer than any of the endpoints' minute, and
//     an escalating lockout of an account would hand its owner's lock to whoever guesses.
// Counted in the store the app is given (rate-limit-store.ts): shared by every instance in
// production, in this process for the embedded default.
import { ORG_API_RATE_LIMIT, RateLimiter, type RateLimitPolicy } from '../../shared/http/rate-limit.js';
import type { RateLimitStore } from '../../shared/http/rate-limit-store.js';
import { FailureThrottle } from '../../shared/sign-in/failure-throttle.js';

const perMinute = (points: number): RateLimitPolicy => ({ ...ORG_API_RATE_LIMIT, points, windowSeconds: 60, abuseThreshold: points });
const FAILURE_WINDOW_SECONDS = 15 * 60;

export interface SignInLimits {
  readonly authorize: RateLimiter;
  readonly logout: RateLimiter;
  readonly forms: RateLimiter;
  readonly passwordFailuresByEmail: FailureThrottle;
  readonly passwordFailuresByDevice: FailureThrottle;
  readonly passwordFailuresByIp: FailureThrottle;
  readonly secondFactorFailuresByUser: FailureThrottle;
}

export function signInLimits(store?: RateLimitStore): SignInLimits {
  const failures = (name: string, count: number) => new FailureThrottle(name, { failures: count, windowSeconds: FAILURE_WINDOW_SECONDS }, store);
  return {
    authorize: new RateLimiter('oauth-authorize', perMinute(300), store),
    logout: new RateLimiter('oauth-logout', perMinute(120), store),
    forms: new RateLimiter('sign-in-forms', perMinute(300), store),
    passwordFailuresByEmail: failures('password-failures-email', 10),
    passwordFailuresByDevice: failures('password-failures-device', 5),
    passwordFailuresByIp: failures('password-failures-ip', 100),
    secondFactorFailuresByUser: failures('second-factor-failures', 10),
  };
}
