// What every sign-in method shares (password, passkey, federated): the contract between the
// sign-in flow (sign-in-routes.ts, which implements it) and the methods mounted beside it, and
// its implementation over the browser's cookies and the sign-in session streams.
import { AMR_VALUES, oauthStreams, type AuthenticationMethod } from '../../shared/oauth/oauth-events.js';
import type { SignInSession } from '../../shared/oauth/authorize-interaction.js';
import type { HttpContext } from '../../shared/http/http-state.js';
import type { CommandContext } from '../../shared/event-store/command-handler.js';
import { SIGN_IN_COOKIES } from '../../shared/sign-in/browser-cookies.js';
import { signInKeys, type SignInKeys } from '../../shared/sign-in/cookie-keys.js';
import { CsrfTokenRejected, csrfTokenFor, csrfTokenMatches, isCsrfSecret, newCsrfSecret } from '../../shared/sign-in/csrf.js';
import {
  activeSession,
  newSessionSecret,
  newSid,
  sessionHashOf,
  signInSessionDecider,
  type SessionEndReason,
} from '../../shared/sign-in/session-decider.js';
import { credentialsDecider, hasSecondFactor } from '../../shared/sign-in/credentials-decider.js';
import { isPasswordOnly } from '../../shared/sign-in/sign-in-methods.js';
import {
  authorizeLocationOf,
  isAuthorizationFlow,
  signedInFor,
  type AuthorizationFlow,
} from '../../shared/sign-in/authorization-flow.js';
import { sha256Hex } from '../../shared/oauth/opaque-credentials.js';
import type { CommandAppDeps } from '../command-app-deps.js';
import { BrowserState } from './browser-state.js';
import { sendOn } from './page-response.js';
import { SIGN_IN_PATHS } from './sign-in-paths.js';

export interface SignInKit {
  /**
   * The browser proved it is `user` with `amr`: start (or replace) the sign-in session and send
   * the browser on (a second factor when the method needs one and the user has it, then back to
   * the pending authorization, or to the account page). Responds; the caller returns after it.
   * A navigation gets a 302; a script that sends `Accept: application/json` gets 200
   * `{"location": "<where to go>"}` instead (a fetch can neither read nor follow a redirect to
   * another origin), and sets `window.location` to it.
   */
  complete(ctx: HttpContext, user: { readonly userId: number; readonly orgId: number }, amr: readonly AuthenticationMethod[]): Promise<void>;
  /**
   * Throws (403) unless the request carries this browser's CSRF token: form field `csrf` or header
   * `X-CSRF-Token`. The form field is read from `ctx.request.body`: parse the form first
   * (page-form.ts `pageForm()`).
   */
  checkCsrf(ctx: HttpContext): void;
  /** The CSRF token to embed in this browser's forms and scripts. */
  csrfToken(ctx: HttpContext): string;
  /** The browser's signed-in session, or null. */
  session(ctx: HttpContext): Promise<SignInSession | null>;
}

/** The password was right; the second factor is still to come (sealed in the `secondFactor` cookie). */
export interface PendingSecondFactor {
  readonly userId: number;
  readonly orgId: number;
  readonly amr: readonly AuthenticationMethod[];
}

/** What the sign-in pages themselves use beyond the kit. */
export interface BrowserSignIn extends SignInKit {
  readonly keys: SignInKeys;
  readonly cookies: BrowserState;
  /** The authorization in progress in this browser, or null. */
  flow(ctx: HttpContext): AuthorizationFlow | null;
  keepFlow(ctx: HttpContext, flow: AuthorizationFlow): void;
  dropFlow(ctx: HttpContext): void;
  pendingSecondFactor(ctx: HttpContext): PendingSecondFactor | null;
  /** Starts the session with no second-factor check (the second factor was just passed) and sends the browser on. */
  startSession(ctx: HttpContext, user: { readonly userId: number; readonly orgId: number }, amr: readonly AuthenticationMethod[]): Promise<void>;
  /** Ends this browser's session (if any) and clears its cookie. */
  endSession(ctx: HttpContext, reason: SessionEndReason): Promise<void>;
  /** After the next sign-in in this browser, send it to `path` (a local path) rather than /account. */
  returnAfterSignIn(ctx: HttpContext, path: string): void;
  /** Where a sign-in with no authorization in progress ends: the page asked for, else /account. */
  landingPage(ctx: HttpContext): string;
}

/** The context of the events a browser request causes: the request id, the user as actor. */
export function userCommandContext(ctx: HttpContext, userId: number, now: Date): CommandContext {
  return { correlationId: ctx.state.requestId, causationId: null, actor: { kind: 'user', id: userId }, now };
}

/** A path of this site (never `//host` or `/\\host`, which browsers read as another origin). */
export function isLocalPath(value: unknown): value is string {
  return typeof value === 'string' && value.length <= 2000 && /^\/(?![/\\])[\x21-\x7e]*$/.test(value);
}

function isPendingSecondFactor(value: unknown): value is PendingSecondFactor {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    Number.isSafeInteger(v.userId) &&
    Number.isSafeInteger(v.orgId) &&
    Array.isArray(v.amr) &&
    v.amr.every((m) => (AMR_VALUES as readonly unknown[]).includes(m))
  );
}

export function createSignInKit(deps: CommandAppDeps): BrowserSignIn {
  const keys = signInKeys(deps.oauth.kek);
  const cookies = new BrowserState(deps.oauth.issuer.startsWith('https:'), keys.cookieKey);
  // Per request: the session is read once, and a token minted for a new CSRF cookie stays the same.
  const sessions = new WeakMap<HttpContext, Promise<SignInSession | null>>();
  const csrfSecrets = new WeakMap<HttpContext, string>();

  function csrfSecret(ctx: HttpContext): string | undefined {
    return csrfSecrets.get(ctx) ?? cookies.get(ctx, SIGN_IN_COOKIES.csrf);
  }

  async function readSession(ctx: HttpContext): Promise<SignInSession | null> {
    const hash = sessionHashOf(cookies.get(ctx, SIGN_IN_COOKIES.session));
    if (hash === null) return null;
    const { state } = await deps.handler.load(oauthStreams.signInSession(hash), signInSessionDecider);
    return activeSession(state, new Date());
  }

  async function endSession(ctx: HttpContext, reason: SessionEndReason, actorId: number | null): Promise<void> {
    const hash = sessionHashOf(cookies.get(ctx, SIGN_IN_COOKIES.session));
    if (hash !== null) {
      const { state } = await deps.handler.load(oauthStreams.signInSession(hash), signInSessionDecider);
      if (state.status === 'active') {
        const userId = actorId ?? state.session.userId;
        await deps.handler.handle(
          oauthStreams.signInSession(hash),
          signInSessionDecider,
          { type: 'EndSignInSession', data: { reason } },
          userCommandContext(ctx, userId, new Date()),
        );
      }
    }
    cookies.clear(ctx, SIGN_IN_COOKIES.session);
    sessions.set(ctx, Promise.resolve(null));
  }

  const kit: BrowserSignIn = {
    keys,
    cookies,

    csrfToken(ctx) {
      let secret = csrfSecret(ctx);
      if (!isCsrfSecret(secret)) {
        secret = newCsrfSecret();
        cookies.set(ctx, SIGN_IN_COOKIES.csrf, secret);
        csrfSecrets.set(ctx, secret);
      }
      return csrfTokenFor(keys.csrfKey, secret);
    },

    checkCsrf(ctx) {
      const body = ctx.request.body as Record<string, unknown> | undefined;
      const header = ctx.get('x-csrf-token');
      const presented = header !== '' ? header : typeof body === 'object' && body !== null ? body.csrf : undefined;
      // Only the cookie the browser sent counts, never one minted during this request.
      if (!csrfTokenMatches(keys.csrfKey, cookies.get(ctx, SIGN_IN_COOKIES.csrf), presented)) throw new CsrfTokenRejected();
    },

    session(ctx) {
      let session = sessions.get(ctx);
      if (session === undefined) {
        session = readSession(ctx);
        sessions.set(ctx, session);
      }
      return session;
    },

    returnAfterSignIn(ctx, path) {
      if (isLocalPath(path)) cookies.setSealed(ctx, SIGN_IN_COOKIES.returnTo, path);
    },

    landingPage(ctx) {
      return cookies.getSealed(ctx, SIGN_IN_COOKIES.returnTo, isLocalPath) ?? SIGN_IN_PATHS.account;
    },

    flow(ctx) {
      return cookies.getSealed(ctx, SIGN_IN_COOKIES.flow, isAuthorizationFlow);
    },

    keepFlow(ctx, flow) {
      cookies.setSealed(ctx, SIGN_IN_COOKIES.flow, flow);
    },

    dropFlow(ctx) {
      cookies.clear(ctx, SIGN_IN_COOKIES.flow);
    },

    pendingSecondFactor(ctx) {
      return cookies.getSealed(ctx, SIGN_IN_COOKIES.secondFactor, isPendingSecondFactor);
    },

    async complete(ctx, user, amr) {
      if (isPasswordOnly(amr)) {
        const { state } = await deps.handler.load(oauthStreams.userCredentials(user.userId), credentialsDecider);
        if (hasSecondFactor(state)) {
          const pending: PendingSecondFactor = { userId: user.userId, orgId: user.orgId, amr: [...amr] };
          cookies.setSealed(ctx, SIGN_IN_COOKIES.secondFactor, pending);
          sendOn(ctx, SIGN_IN_PATHS.secondFactor);
          return;
        }
      }
      await kit.startSession(ctx, user, amr);
    },

    async startSession(ctx, user, amr) {
      const now = new Date();
      // A browser holds one session: signing in again (maybe as someone else) ends the previous one.
      await endSession(ctx, 'replaced', user.userId);
      const secret = newSessionSecret();
      const sessionHash = sha256Hex(secret);
      const sid = newSid();
      const started = {
        sessionHash,
        sid,
        userId: user.userId,
        orgId: user.orgId,
        authTime: now.toISOString(),
        amr: [...new Set(amr)],
      };
      await deps.handler.handle(
        oauthStreams.signInSession(sessionHash),
        signInSessionDecider,
        { type: 'StartSignInSession', data: started },
        userCommandContext(ctx, user.userId, now),
      );
      cookies.set(ctx, SIGN_IN_COOKIES.session, secret);
      cookies.clear(ctx, SIGN_IN_COOKIES.secondFactor);
      sessions.set(ctx, Promise.resolve({ userId: user.userId, orgId: user.orgId, authTime: started.authTime, amr: started.amr, sid }));

      const flow = kit.flow(ctx);
      if (flow === null) {
        const landing = kit.landingPage(ctx);
        cookies.clear(ctx, SIGN_IN_COOKIES.returnTo);
        sendOn(ctx, landing);
        return;
      }
      kit.keepFlow(ctx, signedInFor(flow, sid));
      sendOn(ctx, authorizeLocationOf(flow));
    },

    endSession(ctx, reason) {
      return endSession(ctx, reason, null);
    },
  };
  return kit;
}
