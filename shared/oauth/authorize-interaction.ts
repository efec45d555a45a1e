// What a validated authorize request needs next: the sign-in page, the consent page, or a code.
// Pure: the endpoint gathers the session and the remembered consent, this decides (OpenID Connect
// Core §3.1.2.3 and the spec's prompt and max_age rows). With prompt=none nothing may be shown, so
// what would be shown becomes login_required or consent_required (redirected to the client). A
// signed-in user other than the one an id_token_hint names signs in again, or login_required.
import type { AuthorizeRequest } from './authorize-request.js';
import type { AuthenticationMethod } from './oauth-events.js';
import { AccessDenied, ConsentRequired, LoginRequired } from './oauth-errors.js';
import type { OAuthScope } from './scopes.js';
import { subjectOf } from './tokens.js';

/** The signed-in browser session, as the session store holds it. */
export interface SignInSession {
  readonly userId: number;
  readonly orgId: number;
  /** ISO 8601 time the user last authenticated in this session. */
  readonly authTime: string;
  readonly amr: readonly AuthenticationMethod[];
  /** Public session id (the `sid` claim), never the cookie's secret. */
  readonly sid: string;
}

export interface InteractionInput {
  readonly request: AuthorizeRequest;
  readonly session: SignInSession | null;
  /**
   * The user signed in after being sent to the sign-in page by this very authorization, so
   * prompt=login and max_age are satisfied (without this, max_age=0 would loop forever).
   */
  readonly signedInForThisRequest: boolean;
  /** Scopes this user has already granted this client (consent is remembered per user and client). */
  readonly rememberedConsent: readonly string[];
  /** The user accepted the consent page shown for this very authorization. */
  readonly consentedForThisRequest: boolean;
  /** `sub` of the request's verified id_token_hint: the user the client expects, or null. */
  readonly hintSubject: string | null;
  readonly now: Date;
}

export type Interaction =
  | { readonly next: 'login' }
  /** Show the consent page for `scopes` (all requested scopes; `newScopes` are the ones not yet granted). */
  | { readonly next: 'consent'; readonly scopes: readonly OAuthScope[]; readonly newScopes: readonly OAuthScope[] }
  | { readonly next: 'issue_code'; readonly session: SignInSession };

/** Throws LoginRequired / ConsentRequired (prompt=none) or AccessDenied; the caller redirects them. */
export function nextInteraction(input: InteractionInput): Interaction {
  const { request, session } = input;
  const silent = request.prompt.has('none');

  if (needsSignIn(input)) {
    if (silent) throw new LoginRequired();
    return { next: 'login' };
  }
  const user = session!;
  // OIDC Core §3.1.2.1: a code only for the user the id_token_hint names. One who signed in as
  // someone else for this very request is not sent round again: the client asked for another user.
  if (input.hintSubject !== null && subjectOf(user.userId) !== input.hintSubject) {
    if (silent || input.signedInForThisRequest) throw new LoginRequired();
    return { next: 'login' };
  }
  // Clients are tenant-scoped (spec): a client serves only the users of its own organization.
  if (user.orgId !== request.client.orgId) throw new AccessDenied();

  const newScopes = request.scopes.filter((s) => !input.rememberedConsent.includes(s));
  const needsConsent = !input.consentedForThisRequest && (request.prompt.has('consent') || newScopes.length > 0);
  if (needsConsent) {
    if (silent) throw new ConsentRequired();
    return { next: 'consent', scopes: request.scopes, newScopes };
  }
  return { next: 'issue_code', session: user };
}

function needsSignIn({ request, session, signedInForThisRequest, now }: InteractionInput): boolean {
  if (session === null) return true;
  if (signedInForThisRequest) return false;
  if (request.prompt.has('login')) return true;
  // OIDC Core §3.1.2.1: max_age=0 is prompt=login (whole-second elapsed time would let a session
  // started within the same second pass).
  if (request.maxAge === 0) return true;
  if (request.maxAge !== null) {
    const elapsedSeconds = Math.floor((now.getTime() - Date.parse(session.authTime)) / 1000);
    if (!(elapsedSeconds <= request.maxAge)) return true; // also true for an unreadable auth time
  }
  return false;
}
