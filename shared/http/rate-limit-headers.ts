// The rate-limit headers of an answer, on success and on 429 alike.
//
// `RateLimit` and `RateLimit-Policy` in the syntax of draft-ietf-httpapi-ratelimit-headers-10
// (structured fields: a list of items whose value is the policy's name as a string):
//   RateLimit-Policy: "org-api";q=300;w=60     quota 300 per window of 60 s
//   RateLimit: "org-api";r=0;t=42              0 left, the window resets in 42 s
// beside the spec's older `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`, which
// clients written against earlier drafts read.

export interface RateLimitState {
  /** The policy's name (a limiter's name: letters, digits and hyphens). */
  readonly policy: string;
  readonly limit: number;
  readonly windowSeconds: number;
  readonly remaining: number;
  readonly resetSeconds: number;
}

const POLICY_NAME = /^[A-Za-z0-9_.-]+$/;

export function rateLimitHeaders(state: RateLimitState): Record<string, string> {
  // A name is ours, never a request's; a malformed one would make an invalid structured field.
  if (!POLICY_NAME.test(state.policy)) throw new TypeError(`invalid rate-limit policy name ${state.policy}`);
  const name = `"${state.policy}"`;
  const remaining = Math.max(0, Math.floor(state.remaining));
  const reset = Math.max(0, Math.ceil(state.resetSeconds));
  return {
    RateLimit: `${name};r=${remaining};t=${reset}`,
    'RateLimit-Policy': `${name};q=${state.limit};w=${state.windowSeconds}`,
    'RateLimit-Limit': String(state.limit),
    'RateLimit-Remaining': String(remaining),
    'RateLimit-Reset': String(reset),
  };
}
