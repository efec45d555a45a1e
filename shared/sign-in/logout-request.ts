// RP-Initiated Logout (OpenID Connect RP-Initiated Logout 1.0; spec "GET and POST
// /api/oauth/logout"): what to do with a logout request, decided from its parameters, the
// verified id_token_hint and the browser's session. The endpoint always answers 302.
//
//   * The session ends only when the hint verifies (an expired one is fine, the signature is what
//     counts), names the signed-in user as `sub`, and, when it carries a `sid`, this very session.
//     Anything less cannot prove the request comes from an app the user signed in to, and a
//     cross-site page must not be able to sign the user out.
//   * The browser goes to post_logout_redirect_uri (with `state`) only when that URI is, byte for
//     byte, in the post-logout list of the client named by client_id or by the hint's audience;
//     otherwise to the service home page, so the endpoint is no open redirector.
//   * client_id and the hint's audience must agree when both are given; a request where they do
//     not, a hint that does not verify, or a repeated or malformed parameter changes nothing and
//     goes home.
import type { SignInSession } from '../oauth/authorize-interaction.js';
import type { OAuthClient } from '../oauth/client-decider.js';
import { isClientId } from '../oauth/client-decider.js';
import { MAX_STATE_LENGTH } from '../oauth/authorize-request.js';
import { MAX_REDIRECT_URI_LENGTH, withQueryParameters } from '../oauth/redirect-uri.js';
import { isIdTokenHintShaped, subjectOf, type IdTokenHint } from '../oauth/tokens.js';

export const HOME_PAGE = '/';
const VISIBLE_ASCII = /^[\x20-\x7e]+$/;

export interface LogoutParameters {
  readonly idTokenHint: string | null;
  readonly postLogoutRedirectUri: string | null;
  readonly state: string | null;
  readonly clientId: string | null;
  /** A parameter was repeated or malformed: the request is ignored (home, session kept). */
  readonly malformed: boolean;
}

type Parameters = Readonly<Record<string, string | readonly string[] | undefined>>;

/** Reads the four parameters (query for GET, form body for POST); an empty value is an absent one. */
export function readLogoutParameters(params: Parameters): LogoutParameters {
  let malformed = false;
  const get = (name: string, valid: (value: string) => boolean): string | null => {
    const raw = params[name];
    if (raw === undefined) return null;
    if (typeof raw !== 'string') {
      malformed = true;
      return null;
    }
    if (raw === '') return null;
    if (!valid(raw)) {
      malformed = true;
      return null;
    }
    return raw;
  };
  const result = {
    idTokenHint: get('id_token_hint', isIdTokenHintShaped),
    postLogoutRedirectUri: get('post_logout_redirect_uri', (v) => v.length <= MAX_REDIRECT_URI_LENGTH && VISIBLE_ASCII.test(v)),
    state: get('state', (v) => v.length <= MAX_STATE_LENGTH && VISIBLE_ASCII.test(v)),
    clientId: get('client_id', isClientId),
  };
  return { ...result, malformed };
}

/** What verifying the hint gave: absent, refused, or its claims. */
export type HintOutcome = { readonly kind: 'absent' } | { readonly kind: 'invalid' } | { readonly kind: 'valid'; readonly hint: IdTokenHint };

/**
 * The client whose post-logout list applies: client_id, else the hint's audience (our id_tokens
 * name the client first). Null when neither says, or when they disagree.
 */
export function logoutClientId(params: LogoutParameters, hint: HintOutcome): string | null {
  if (hint.kind === 'valid') {
    if (params.clientId !== null) return hint.hint.aud.includes(params.clientId) ? params.clientId : null;
    return hint.hint.aud[0] ?? null;
  }
  return params.clientId;
}

export interface LogoutInput {
  readonly params: LogoutParameters;
  readonly hint: HintOutcome;
  readonly session: SignInSession | null;
  /** The client named by logoutClientId, as the registry has it (null: unknown or none named). */
  readonly client: OAuthClient | null;
}

export interface LogoutDecision {
  readonly endSession: boolean;
  readonly location: string;
}

export function decideLogout({ params, hint, session, client }: LogoutInput): LogoutDecision {
  const home: LogoutDecision = { endSession: false, location: HOME_PAGE };
  if (params.malformed || hint.kind === 'invalid') return home;
  const clientId = logoutClientId(params, hint);
  // client_id given and not among the hint's audiences.
  if (hint.kind === 'valid' && params.clientId !== null && clientId === null) return home;

  const endSession =
    hint.kind === 'valid' &&
    session !== null &&
    hint.hint.sub === subjectOf(session.userId) &&
    (hint.hint.sid === null || hint.hint.sid === session.sid);

  const uri = params.postLogoutRedirectUri;
  const registered = uri !== null && client !== null && client.clientId === clientId && client.postLogoutRedirectUris.includes(uri);
  return { endSession, location: registered ? withQueryParameters(uri, { state: params.state }) : HOME_PAGE };
}
