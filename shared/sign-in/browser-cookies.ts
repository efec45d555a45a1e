// The sign-in cookies and their Set-Cookie headers. Written by hand rather than with
// ctx.cookies.set: Koa refuses a Secure cookie on a request it does not itself see as https (TLS
// ended at a proxy), yet these cookies are always Secure (browsers also accept Secure cookies
// from http://127.0.0.1 and localhost, so development works unchanged). Every cookie is HttpOnly
// (no script ever needs one: the CSRF token reaches scripts through the page, not the cookie),
// Path=/ and host-only; on an https issuer the name takes the `__Host-` prefix so the browser
// refuses a copy planted by a sibling subdomain.

import { SESSION_LIFETIME_SECONDS } from './session-decider.js';

export type SameSite = 'Strict' | 'Lax';

export interface CookieSpec {
  /** The name without prefix. */
  readonly name: string;
  /**
   * Lax when a top-level navigation from another site must carry it (the session and the
   * authorization in progress come back with the redirect from a client or an upstream
   * provider); Strict when only our own pages send it.
   */
  readonly sameSite: SameSite;
  readonly maxAgeSeconds: number;
}

export const SIGN_IN_COOKIES = {
  /** The browser's sign-in session: a random 256-bit secret (only its SHA-256 is stored). */
  session: { name: 'gp_session', sameSite: 'Lax', maxAgeSeconds: SESSION_LIFETIME_SECONDS },
  /** The CSRF secret the forms' tokens are bound to. */
  csrf: { name: 'gp_csrf', sameSite: 'Lax', maxAgeSeconds: SESSION_LIFETIME_SECONDS },
  /** The authorization in progress (sealed): comes back from the client and the upstream provider. */
  flow: { name: 'gp_authz', sameSite: 'Lax', maxAgeSeconds: 15 * 60 },
  /** Password accepted, second factor pending (sealed); only our own second-factor page sends it. */
  secondFactor: { name: 'gp_mfa', sameSite: 'Strict', maxAgeSeconds: 5 * 60 },
  /** A TOTP secret shown for enrolment and not yet confirmed (sealed). */
  totpEnrolment: { name: 'gp_totp', sameSite: 'Strict', maxAgeSeconds: 10 * 60 },
  /**
   * This browser entered the right password for an account before (sealed: the account's email
   * hash and a random device id). Its own small failure budget spares it the account's lockout,
   * which anyone can trigger (OWASP's "device cookies"). Only our own sign-in form sends it.
   */
  device: { name: 'gp_device', sameSite: 'Strict', maxAgeSeconds: 180 * 24 * 60 * 60 },
  /**
   * The page of this site a sign-in was asked for (sealed, a local path): the console sends a
   * browser that is not signed in to /signin and back there after it. Only our own pages set it.
   */
  returnTo: { name: 'gp_return', sameSite: 'Lax', maxAgeSeconds: 15 * 60 },
} as const satisfies Record<string, CookieSpec>;

const NAME = /^[A-Za-z0-9_-]+$/;
// Only base64url and dots are ever stored: nothing to encode, nothing to inject.
const VALUE = /^[A-Za-z0-9_.-]*$/;

/** The name the browser stores and sends back. */
export function cookieName(spec: Pick<CookieSpec, 'name'>, httpsIssuer: boolean): string {
  if (!NAME.test(spec.name)) throw new TypeError(`invalid cookie name ${spec.name}`);
  return httpsIssuer ? `__Host-${spec.name}` : spec.name;
}

export function setCookieHeader(spec: CookieSpec, value: string, httpsIssuer: boolean, maxAgeSeconds = spec.maxAgeSeconds): string {
  if (!VALUE.test(value)) throw new TypeError('a cookie value must be base64url');
  return [
    `${cookieName(spec, httpsIssuer)}=${value}`,
    'Path=/',
    `Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}`,
    'HttpOnly',
    'Secure',
    `SameSite=${spec.sameSite}`,
  ].join('; ');
}

export function clearCookieHeader(spec: CookieSpec, httpsIssuer: boolean): string {
  return `${setCookieHeader(spec, '', httpsIssuer, 0)}; Expires=Thu, 01 Jan 1970 00:00:00 GMT`;
}
