// The authorization in progress, and how the browser's coming back is tied to it.
//
// When the authorize endpoint must show the sign-in or consent page, it keeps the request's query
// string in a sealed, short-lived cookie (browser-cookies.ts `flow`) and sends the browser there.
// Whatever signs the user in (password, second factor, passkey, federated callback) or records
// consent then sends the browser back to the authorize endpoint with that very query, and marks
// the flow: `signedIn` / `consented` hold the sid of the session that did it.
//
// Back at the endpoint, "signed in for this request" (which satisfies prompt=login and max_age)
// and "consented for this request" (which satisfies prompt=consent) hold only when the cookie's
// query is byte-for-byte the request's query AND the mark is the current session's sid. So a
// sign-in counts for the one authorization that asked for it, never for another request, another
// tab's request, or a session started later; and since only the server can seal the cookie, the
// browser cannot mark a flow itself. A newer authorization needing UI replaces the cookie (one
// flow per browser at a time); the older one then simply asks again.
import { sha256Hex } from '../oauth/opaque-credentials.js';
import type { SignInSession } from '../oauth/authorize-interaction.js';
import { OAUTH_PATHS } from '../oauth/discovery.js';

/**
 * A longer query does not fit in a cookie once sealed (browsers keep about 4 KB per cookie).
 * Far above real requests; the spec's parameters with their own limits stay well under it.
 */
export const MAX_FLOW_QUERY_LENGTH = 2800;

export interface AuthorizationFlow {
  /** The authorize request's query string exactly as received (without the `?`). */
  readonly query: string;
  /** The sid of the session a sign-in for this flow started; null until then. */
  readonly signedIn: string | null;
  /** The sid of the session that allowed this flow on the consent page; null until then. */
  readonly consented: string | null;
}

export interface FlowBinding {
  readonly signedInForThisRequest: boolean;
  readonly consentedForThisRequest: boolean;
}

const nullableString = (v: unknown): v is string | null => v === null || typeof v === 'string';

/** Shape check of an opened cookie (sealed by us, but possibly by an older version of this code). */
export function isAuthorizationFlow(value: unknown): value is AuthorizationFlow {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.query === 'string' && v.query.length <= MAX_FLOW_QUERY_LENGTH && nullableString(v.signedIn) && nullableString(v.consented);
}

/**
 * The flow to keep when the endpoint sends the browser to a page for `query`: a sign-in already
 * done for this same request survives a detour to the consent page; anything else starts clean.
 */
export function flowFor(query: string, previous: AuthorizationFlow | null, next: 'login' | 'consent'): AuthorizationFlow {
  const same = previous !== null && previous.query === query;
  return { query, signedIn: next === 'consent' && same ? previous.signedIn : null, consented: null };
}

export function flowBinding(flow: AuthorizationFlow | null, query: string, session: SignInSession | null): FlowBinding {
  const bound = flow !== null && session !== null && flow.query === query;
  return {
    signedInForThisRequest: bound && flow.signedIn === session.sid,
    consentedForThisRequest: bound && flow.consented === session.sid,
  };
}

export function signedInFor(flow: AuthorizationFlow, sid: string): AuthorizationFlow {
  return { ...flow, signedIn: sid, consented: null };
}

export function consentedFor(flow: AuthorizationFlow, sid: string): AuthorizationFlow {
  return { ...flow, consented: sid };
}

/** Where the browser goes back to: the authorize endpoint with the very same query. */
export function authorizeLocationOf(flow: AuthorizationFlow): string {
  return `${OAUTH_PATHS.authorize}?${flow.query}`;
}

/**
 * Names the request a consent page showed; the page posts it back, so an Allow counts only for
 * the request that was on screen (another tab may have started a newer flow in between).
 */
export function flowRequestId(flow: AuthorizationFlow): string {
  return sha256Hex(`authorize?${flow.query}`);
}
