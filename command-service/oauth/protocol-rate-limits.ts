// The rate limits of the OAuth protocol endpoints (token, introspect, revoke). The spec leaves the
// numbers open ("they do return 429"). Two budgets each, for two different questions:
//
//  * Per source address, before the client is authenticated: FAILURES only (a failed client
//    authentication, an invalid grant, a malformed request), which is what a guesser produces.
//    A request holds a point while it is checked (so however many arrive at once, no more than
//    the budget are checked) and gives it back when it did not fail: correct requests cost nothing
//    here, so an office or a backend-for-frontend behind one address may refresh for all its users,
//    and a resource server may introspect on every request it serves (failure-budget.ts: the
//    points of correct requests stay with the instance for its next ones instead of being written
//    twice per request). Spending the whole budget is abuse in itself: the first refusal locks the
//    address out at the next escalating level (15 min, 1 h, 24 h), and ignoring the 429s meanwhile
//    climbs further ('exhaustion').
//      token       600 failures per minute: codes and refresh tokens are 256 random bits, so a
//                  client that fails 10 times a second is broken or guessing.
//      introspect  1,200 failures per minute (a wrong secret; an inactive token is a correct
//                  answer, {"active": false}, and not a failure: a gateway sees expired tokens).
//      revoke      600 failures per minute (a wrong secret; RFC 7009 answers 200 for any token).
//
//  * Per authenticated client, after it: a budget sized for a resource server introspecting on
//    every request it serves, OAUTH_CLIENT_RATE_LIMIT requests per second per client and endpoint
//    (10,000 by default: ten times the 1,000 a second a busy API gateway may introspect, and above
//    what one instance on two cores answers, so it bites only in a deployment large enough for one
//    client to crowd out the others). It never escalates ('never'): the caller proved who it is, and a busy hour of
//    a customer's gateway must not take the customer's API down for a day. A 429 there is
//    back-pressure, with Retry-After inside the one-second window. A public client at /token is
//    identified by its client_id only (PKCE is its proof, checked after): someone who sends its id
//    with invalid grants spends that client's budget for a second at most, and pays for every
//    try with the failure budget of their own address.
//    Counted in each instance's memory, not in the shared store: the budget answers back-pressure
//    only (no lockout, nothing to list or lift), and what it protects is the instance's own
//    capacity, so each instance bounds its own share: a client spread over N instances may make
//    N times the budget in all, which N instances are there to serve. A shared count would cost a
//    store write per request for an answer no instance needs from the others.
import { ORG_API_RATE_LIMIT, RateLimiter, type RateLimitPolicy } from '../../shared/http/rate-limit.js';
import { memoryRateLimitStore, type RateLimitStore } from '../../shared/http/rate-limit-store.js';

const failuresPerMinute = (points: number): RateLimitPolicy => Object.freeze({ ...ORG_API_RATE_LIMIT, points, windowSeconds: 60, abuseThreshold: points, escalation: 'exhaustion' });

export const TOKEN_ENDPOINT_FAILURE_LIMIT: RateLimitPolicy = failuresPerMinute(600);
export const INTROSPECT_FAILURE_LIMIT: RateLimitPolicy = failuresPerMinute(1200);
export const REVOKE_FAILURE_LIMIT: RateLimitPolicy = failuresPerMinute(600);

/** The default of OAUTH_CLIENT_RATE_LIMIT: requests per second per authenticated client, per endpoint. */
export const DEFAULT_CLIENT_REQUESTS_PER_SECOND = 10_000;

/** The back-pressure budget of one authenticated client at one endpoint. */
export function clientRateLimit(perSecond: number): RateLimitPolicy {
  return Object.freeze({ ...ORG_API_RATE_LIMIT, points: perSecond, windowSeconds: 1, abuseThreshold: perSecond, escalation: 'never' });
}

export interface ProtocolLimits {
  readonly tokenByAddress: RateLimiter;
  readonly tokenByClient: RateLimiter;
  readonly introspectByAddress: RateLimiter;
  readonly introspectByClient: RateLimiter;
  readonly revokeByAddress: RateLimiter;
  readonly revokeByClient: RateLimiter;
}

export interface ProtocolLimitOptions {
  /** OAUTH_CLIENT_RATE_LIMIT: requests per second per authenticated client and endpoint. */
  readonly clientRequestsPerSecond?: number;
  /** Overrides of the per-address failure budgets (tests lower them). */
  readonly failureOverrides?: Partial<RateLimitPolicy>;
}

export function protocolLimits(store: RateLimitStore | undefined, options: ProtocolLimitOptions = {}): ProtocolLimits {
  const perClient = clientRateLimit(options.clientRequestsPerSecond ?? DEFAULT_CLIENT_REQUESTS_PER_SECOND);
  const failures = (policy: RateLimitPolicy) => ({ ...policy, ...options.failureOverrides });
  // This instance's own (see the header).
  const clientCounts = memoryRateLimitStore();
  return {
    tokenByAddress: new RateLimiter('oauth-token', failures(TOKEN_ENDPOINT_FAILURE_LIMIT), store),
    tokenByClient: new RateLimiter('oauth-token-client', perClient, clientCounts),
    introspectByAddress: new RateLimiter('oauth-introspect', failures(INTROSPECT_FAILURE_LIMIT), store),
    introspectByClient: new RateLimiter('oauth-introspect-client', perClient, clientCounts),
    revokeByAddress: new RateLimiter('oauth-revoke', failures(REVOKE_FAILURE_LIMIT), store),
    revokeByClient: new RateLimiter('oauth-revoke-client', perClient, clientCounts),
  };
}
