// CSRF protection of the sign-in pages' forms and scripts: a synchronizer token bound to a
// cookie. The browser holds a random secret in an HttpOnly cookie; the token embedded in forms is
// HMAC(key, secret). A cross-site page can make the browser send the cookie but can read neither
// it nor the token, and cannot compute the token without the server's key, so a request that
// carries a token matching its own cookie came from one of our pages. Compared in constant time.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { DomainError } from '../errors.js';

const SECRET = /^[A-Za-z0-9_-]{43}$/;

/** 403: the request did not carry this browser's CSRF token. */
export class CsrfTokenRejected extends DomainError {
  readonly status = 403;
  readonly code = 'csrf_token_invalid';
  constructor() {
    super('the form has expired or did not come from this site; reload the page and try again');
  }
}

/** A fresh cookie secret: 256 random bits, base64url. */
export function newCsrfSecret(): string {
  return randomBytes(32).toString('base64url');
}

export function isCsrfSecret(value: string | undefined | null): value is string {
  return typeof value === 'string' && SECRET.test(value);
}

export function csrfTokenFor(key: Buffer, secret: string): string {
  return createHmac('sha256', key).update(`csrf:${secret}`, 'utf8').digest('base64url');
}

/** True when `presented` is the token of `secret`; false for anything missing or malformed. */
export function csrfTokenMatches(key: Buffer, secret: string | undefined | null, presented: unknown): boolean {
  if (!isCsrfSecret(secret) || typeof presented !== 'string') return false;
  const expected = Buffer.from(csrfTokenFor(key, secret), 'utf8');
  const actual = Buffer.from(presented, 'utf8');
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
