// A federated sign-in in flight (state, nonce and PKCE code_verifier), kept in the browser's
// HttpOnly cookie between the redirect to the upstream provider and its callback, so nothing is
// stored server-side for sign-ins that are abandoned. The cookie is sealed (sealed-cookie.ts:
// AES-256-GCM under a key derived from the KEK, purpose-bound, expiry inside), so the browser can
// neither forge nor read it; the callback must present the same state (login CSRF) and clears it.
import { openCookieValue, sealCookieValue } from '../sealed-cookie.js';

export interface FederatedFlow {
  /** The upstream issuer the flow was started with (a configuration change voids the flow). */
  readonly issuer: string;
  readonly state: string;
  readonly nonce: string;
  readonly codeVerifier: string;
}

/** Time to sign in at the upstream provider. */
export const FEDERATED_FLOW_TTL_SECONDS = 600;

const PURPOSE = 'federated-sign-in';

export function sealFederatedFlow(flow: FederatedFlow, key: Buffer, now: Date): string {
  const value = [flow.issuer, flow.state, flow.nonce, flow.codeVerifier];
  return sealCookieValue(key, PURPOSE, value, new Date(now.getTime() + FEDERATED_FLOW_TTL_SECONDS * 1000));
}

/** The flow, or null when the cookie is missing, forged, altered, malformed or expired. */
export function openFederatedFlow(cookie: string | undefined, key: Buffer, now: Date): FederatedFlow | null {
  const fields = openCookieValue<unknown>(key, PURPOSE, cookie, now);
  if (!Array.isArray(fields) || fields.length !== 4 || !fields.every((f) => typeof f === 'string' && f.length > 0)) return null;
  const [issuer, state, nonce, codeVerifier] = fields as [string, string, string, string];
  return { issuer, state, nonce, codeVerifier };
}
