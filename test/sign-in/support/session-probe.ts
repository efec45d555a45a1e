// What end-to-end tests look at behind a browser: its sign-in session stream, the events of a
// type, a fresh PKCE challenge, a browser signed in without an authorization.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { RecordedEvent } from '../../../shared/event-store/event-store.js';
import { oauthStreams, type SignInSessionEvent } from '../../../shared/oauth/oauth-events.js';
import { sha256Hex } from '../../../shared/oauth/opaque-credentials.js';
import { s256Challenge } from '../../../shared/oauth/pkce.js';
import type { Stack } from '../../support/stack.js';
import { Browser } from './browser.js';
import { submitPassword, submitTotp } from './sign-in-driver.js';

/** A random PKCE verifier and its S256 challenge. */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: s256Challenge(verifier) };
}

/** The session cookie's secret this browser holds, or undefined. */
export function sessionSecretOf(browser: Browser): string | undefined {
  return browser.jar.get('gp_session');
}

/** The events of the browser's current session stream (empty without a session cookie). */
export async function sessionEvents(stack: Stack, browser: Browser): Promise<Array<RecordedEvent & SignInSessionEvent>> {
  const secret = sessionSecretOf(browser);
  if (secret === undefined) return [];
  return (await stack.store.readStream(oauthStreams.signInSession(sha256Hex(secret)))) as Array<RecordedEvent & SignInSessionEvent>;
}

/** The SignInSessionStarted data of the browser's current session; fails when there is none. */
export async function startedSession(stack: Stack, browser: Browser) {
  const events = await sessionEvents(stack, browser);
  const started = events.find((e) => e.type === 'SignInSessionStarted');
  expect(started, 'the browser has a started session').to.not.equal(undefined);
  return (started as Extract<SignInSessionEvent, { type: 'SignInSessionStarted' }>).data;
}

/**
 * How a session ended (its SignInSessionEnded data), or undefined while it has not. Read from the
 * session's own stream: readAll may lag behind a write while other transactions are open.
 */
export async function sessionEnd(stack: Stack, sessionHash: string) {
  const events = (await stack.store.readStream(oauthStreams.signInSession(sessionHash))) as Array<RecordedEvent & SignInSessionEvent>;
  const ended = events.find((e) => e.type === 'SignInSessionEnded');
  return ended === undefined ? undefined : (ended as Extract<SignInSessionEvent, { type: 'SignInSessionEnded' }>).data;
}

/** The AuthorizationCodeIssued event of a code the client received. */
export async function codeIssued(stack: Stack, code: string): Promise<RecordedEvent | undefined> {
  return (await stack.store.readStream(oauthStreams.authorizationCode(sha256Hex(code)))).find((e) => e.type === 'AuthorizationCodeIssued');
}

/** A browser signed in through the sign-in page alone (it lands on the account page). */
export async function signedInBrowser(stack: { readonly baseUrl: string }, email: string, password: string, totpSecret?: string): Promise<Browser> {
  const browser = new Browser(stack.baseUrl);
  let next = await submitPassword(browser, email, password);
  if (next === '/signin/second-factor') {
    if (totpSecret === undefined) throw new Error('the user has a second factor: pass totpSecret');
    next = await submitTotp(browser, totpSecret);
  }
  expect(next).to.equal('/account');
  return browser;
}
