// A browser's sign-in session, one stream per session (`signin-session-{sha256(cookie secret)}`).
// The cookie holds a random 256-bit secret; the stream, its events and every log line know only
// its SHA-256 (a uniformly random secret cannot be recovered from a fast hash, see
// opaque-credentials.ts). The public `sid` names the session in id_tokens and logout.
//
// A session lives SESSION_LIFETIME_SECONDS from its authentication, then the user signs in
// again; ending it (logout, or a new sign-in in the same browser) is recorded once.
import { randomBytes } from 'node:crypto';
import type { Decider } from '../domain/decider.js';
import { ConflictError, ValidationError } from '../errors.js';
import type { SignInSession } from '../oauth/authorize-interaction.js';
import { SESSION_ID_PATTERN, type SignInSessionEnded, type SignInSessionEvent, type SignInSessionStarted } from '../oauth/oauth-events.js';
import { sha256Hex } from '../oauth/opaque-credentials.js';

export const SESSION_LIFETIME_SECONDS = 12 * 60 * 60;
/**
 * Adding an authenticator (an authenticator app, a passkey) or removing a passkey needs a sign-in
 * at most this old: a session cookie that leaked must not let its holder bind an authenticator of
 * their own, which would outlive the session, nor remove the user's.
 */
export const RECENT_AUTHENTICATION_SECONDS = 10 * 60;

const SECRET = /^[A-Za-z0-9_-]{43}$/;
const SID = new RegExp(SESSION_ID_PATTERN);

export type SessionEndReason = SignInSessionEnded['data']['reason'];

export type SignInSessionState =
  | { readonly status: 'none' }
  | { readonly status: 'active'; readonly session: SignInSessionStarted['data'] }
  | { readonly status: 'ended'; readonly session: SignInSessionStarted['data']; readonly reason: SessionEndReason };

export type SignInSessionCommand =
  | { type: 'StartSignInSession'; data: SignInSessionStarted['data'] }
  | { type: 'EndSignInSession'; data: { reason: SessionEndReason } };

/** The cookie's secret: 256 random bits, base64url. */
export function newSessionSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** The stream-naming hash of a cookie's secret, or null when the cookie cannot be one of ours. */
export function sessionHashOf(secret: string | undefined | null): string | null {
  return typeof secret === 'string' && SECRET.test(secret) ? sha256Hex(secret) : null;
}

/** A public session id (`sid`): 128 random bits, base64url (22 characters). */
export function newSid(): string {
  return randomBytes(16).toString('base64url');
}

export const signInSessionDecider: Decider<SignInSessionCommand, SignInSessionEvent, SignInSessionState> = {
  initialState: () => ({ status: 'none' }),

  evolve(state, event) {
    switch (event.type) {
      case 'SignInSessionStarted':
        return state.status === 'none' ? { status: 'active', session: event.data } : state;
      case 'SignInSessionEnded':
        return state.status === 'active' ? { status: 'ended', session: state.session, reason: event.data.reason } : state;
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'StartSignInSession': {
        const data = command.data;
        if (!SID.test(data.sid) || data.amr.length === 0 || Number.isNaN(Date.parse(data.authTime))) {
          throw new ValidationError('the sign-in session is malformed');
        }
        // Every session has a fresh random secret: a second start on one stream is a bug, not a retry.
        if (state.status !== 'none') throw new ConflictError('this sign-in session has already started');
        const event: SignInSessionStarted = { type: 'SignInSessionStarted', data: { ...data, amr: [...new Set(data.amr)] } };
        return [event];
      }
      case 'EndSignInSession': {
        // Ending an ended (or never started) session records nothing: signing out twice is fine.
        if (state.status !== 'active') return [];
        const { sessionHash, sid } = state.session;
        const event: SignInSessionEnded = { type: 'SignInSessionEnded', data: { sessionHash, sid, reason: command.data.reason } };
        return [event];
      }
    }
  },
};

/** Whether the session's user authenticated within RECENT_AUTHENTICATION_SECONDS (an unreadable time is not recent). */
export function authenticatedRecently(session: Pick<SignInSession, 'authTime'>, now: Date): boolean {
  return now.getTime() - Date.parse(session.authTime) < RECENT_AUTHENTICATION_SECONDS * 1000;
}

/** The session as the authorize endpoint sees it: null unless started, not ended and not expired. */
export function activeSession(state: SignInSessionState, now: Date): SignInSession | null {
  if (state.status !== 'active') return null;
  const { userId, orgId, authTime, amr, sid } = state.session;
  const ageMs = now.getTime() - Date.parse(authTime);
  if (!(ageMs < SESSION_LIFETIME_SECONDS * 1000)) return null;
  return { userId, orgId, authTime, amr, sid };
}
