// GET /api/oauth/authorize: validation of every parameter of the spec's table, in the order that
// decides how an error may be reported.
//
// 1. client_id and redirect_uri first. Until both are known to belong together there is no safe
//    place to send the browser (RFC 6749 §4.1.2.1, RFC 9700 §4.1): any problem with them is a
//    400 JSON error, never a redirect, so the endpoint cannot be used as an open redirector.
// 2. Everything after that is reported by redirecting to the (now trusted) redirect_uri with
//    `error`, `error_description`, `state` and `iss` (RFC 9207), checked in the order:
//    repeated parameters, request objects, response_type, response_mode, scope, PKCE, prompt,
//    max_age, nonce, id_token_hint (its shape; the endpoint verifies its signature).
// Parameters sent without a value are treated as omitted (RFC 6749 §3.1); unknown parameters are
// ignored (RFC 6749 §3.1); a parameter sent twice is invalid_request (RFC 6749 §3.1).
import type { ClientDirectory, OAuthClient } from './client-decider.js';
import { isClientId } from './client-decider.js';
import {
  InvalidRequest,
  OAuthError,
  RequestNotSupported,
  RequestUriNotSupported,
  UnsupportedResponseType,
  toOAuthErrorBody,
} from './oauth-errors.js';
import { CODE_CHALLENGE_METHOD, isValidS256Challenge } from './pkce.js';
import { matchRedirectUri, withQueryParameters } from './redirect-uri.js';
import { requestedScopes, type OAuthScope } from './scopes.js';
import { isIdTokenHintShaped } from './tokens.js';

/** Koa's `ctx.query`: a repeated parameter arrives as an array. */
export type QueryParameters = Readonly<Record<string, string | readonly string[] | undefined>>;

export type Prompt = 'none' | 'login' | 'consent';

export const INVALID_ID_TOKEN_HINT = 'The id_token_hint is not a valid ID Token of this server.';
const PROMPTS: readonly Prompt[] = ['none', 'login', 'consent'];

export const MAX_STATE_LENGTH = 2048;
export const MAX_NONCE_LENGTH = 512;
export const MAX_LOGIN_HINT_LENGTH = 256;
/** max_age beyond about 68 years is nonsense; the bound keeps the arithmetic exact. */
export const MAX_MAX_AGE = 2_147_483_647;

// Visible ASCII: state and nonce are opaque but end up in URLs, HTML forms and JWTs.
const VISIBLE_ASCII = /^[\x20-\x7e]+$/;
const MAX_AGE = /^\d{1,10}$/;

/** The parameters this endpoint reads; a repeat of any of them is invalid_request. */
const KNOWN = [
  'client_id',
  'redirect_uri',
  'response_type',
  'response_mode',
  'scope',
  'state',
  'code_challenge',
  'code_challenge_method',
  'nonce',
  'prompt',
  'max_age',
  'login_hint',
  'id_token_hint',
  'request',
  'request_uri',
] as const;

export interface AuthorizeRequest {
  readonly client: OAuthClient;
  /** The redirect_uri exactly as sent (for loopback, with the port the app chose). */
  readonly redirectUri: string;
  readonly scopes: readonly OAuthScope[];
  readonly state: string | null;
  readonly codeChallenge: string;
  readonly codeChallengeMethod: typeof CODE_CHALLENGE_METHOD;
  readonly nonce: string | null;
  readonly prompt: ReadonlySet<Prompt>;
  /** Seconds; null when absent. */
  readonly maxAge: number | null;
  /** Pre-fills the sign-in form; never trusted. */
  readonly loginHint: string | null;
  /** An id_token naming the user the client expects (OpenID Connect Core §3.1.2.1), not verified yet. */
  readonly idTokenHint: string | null;
}

export type AuthorizeValidation =
  | { readonly outcome: 'valid'; readonly request: AuthorizeRequest }
  /** 400 JSON `{error, error_description}`: never redirect. */
  | { readonly outcome: 'reject'; readonly error: OAuthError }
  /** 302 to `location`, which carries error, error_description, state and iss. */
  | { readonly outcome: 'redirect'; readonly error: OAuthError; readonly location: string };

function single(params: QueryParameters, name: string): string | undefined | 'repeated' {
  const value = params[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') return value.length === 1 ? value[0] || undefined : 'repeated';
  return value === '' ? undefined : value;
}

/** The success redirect (RFC 6749 §4.1.2 plus RFC 9207 `iss`). */
export function authorizeSuccessLocation(redirectUri: string, code: string, state: string | null, issuer: string): string {
  return withQueryParameters(redirectUri, { code, state, iss: issuer });
}

/** An error redirect (RFC 6749 §4.1.2.1 plus RFC 9207 `iss`), used here and by the login/consent flow. */
export function authorizeErrorLocation(redirectUri: string, error: OAuthError, state: string | null, issuer: string): string {
  const body = toOAuthErrorBody(error);
  return withQueryParameters(redirectUri, { error: body.error, error_description: body.error_description, state, iss: issuer });
}

export async function validateAuthorizeRequest(
  params: QueryParameters,
  clients: ClientDirectory,
  issuer: string,
): Promise<AuthorizeValidation> {
  // ---- 1. The client and redirect_uri pair: errors are never redirected. ----
  const clientId = single(params, 'client_id');
  if (clientId === undefined || clientId === 'repeated' || !isClientId(clientId)) {
    return { outcome: 'reject', error: new InvalidRequest('The client_id is missing or invalid.') };
  }
  const redirectUri = single(params, 'redirect_uri');
  if (redirectUri === undefined || redirectUri === 'repeated') {
    return { outcome: 'reject', error: new InvalidRequest('The redirect_uri is missing or invalid.') };
  }
  const client = await clients.findClient(clientId);
  if (!client) return { outcome: 'reject', error: new InvalidRequest('The client_id is missing or invalid.') };
  if (matchRedirectUri(client.redirectUris, redirectUri) === null) {
    return { outcome: 'reject', error: new InvalidRequest('The redirect_uri is not registered for this client.') };
  }

  // ---- 2. From here on, errors go back to the client's redirect_uri. ----
  const stateValue = single(params, 'state');
  // A repeated state cannot be echoed faithfully: report the repeat without one.
  const state = stateValue === undefined || stateValue === 'repeated' ? null : stateValue;
  const fail = (error: OAuthError): AuthorizeValidation => ({
    outcome: 'redirect',
    error,
    location: authorizeErrorLocation(redirectUri, error, state, issuer),
  });

  for (const name of KNOWN) {
    if (single(params, name) === 'repeated') return fail(new InvalidRequest(`The ${name} parameter is repeated.`));
  }
  // Values below are single strings or undefined: repeats were rejected above.
  const get = (name: (typeof KNOWN)[number]) => single(params, name) as string | undefined;

  if (state !== null && (state.length > MAX_STATE_LENGTH || !VISIBLE_ASCII.test(state))) {
    return fail(new InvalidRequest('The state parameter is too long or contains invalid characters.'));
  }

  // OpenID Connect Core §6: request objects are not supported, and say so.
  if (get('request') !== undefined) return fail(new RequestNotSupported());
  if (get('request_uri') !== undefined) return fail(new RequestUriNotSupported());

  const responseType = get('response_type');
  if (responseType === undefined) return fail(new InvalidRequest('The response_type parameter is missing.'));
  if (responseType !== 'code') return fail(new UnsupportedResponseType());

  // Only the query response mode exists here (discovery says so); a client asking for another
  // would not find the response where it looks.
  const responseMode = get('response_mode');
  if (responseMode !== undefined && responseMode !== 'query') {
    return fail(new InvalidRequest('The response_mode is not supported.'));
  }

  let scopes: OAuthScope[];
  try {
    scopes = requestedScopes(get('scope'), client.allowedScopes);
  } catch (error) {
    return fail(error as OAuthError);
  }

  // RFC 7636 §4.4.1: PKCE is mandatory for every client, and only S256 (spec).
  const codeChallenge = get('code_challenge');
  if (codeChallenge === undefined) return fail(new InvalidRequest('A code_challenge is required.'));
  const method = get('code_challenge_method');
  if (method === undefined) return fail(new InvalidRequest('The code_challenge_method is required.'));
  if (method !== CODE_CHALLENGE_METHOD) return fail(new InvalidRequest('The code_challenge_method must be S256.'));
  if (!isValidS256Challenge(codeChallenge)) return fail(new InvalidRequest('The code_challenge is malformed.'));

  const prompt = parsePrompt(get('prompt'));
  if (prompt === null) return fail(new InvalidRequest('The prompt parameter is invalid.'));

  const maxAgeText = get('max_age');
  let maxAge: number | null = null;
  if (maxAgeText !== undefined) {
    if (!MAX_AGE.test(maxAgeText) || Number(maxAgeText) > MAX_MAX_AGE) {
      return fail(new InvalidRequest('The max_age parameter must be a non-negative integer.'));
    }
    maxAge = Number(maxAgeText);
  }

  const nonce = get('nonce') ?? null;
  if (nonce !== null && (nonce.length > MAX_NONCE_LENGTH || !VISIBLE_ASCII.test(nonce))) {
    return fail(new InvalidRequest('The nonce parameter is too long or contains invalid characters.'));
  }

  const loginHintText = get('login_hint');
  // A bad hint is only a hint: drop it instead of failing the request.
  const loginHint =
    loginHintText !== undefined && loginHintText.length <= MAX_LOGIN_HINT_LENGTH && VISIBLE_ASCII.test(loginHintText)
      ? loginHintText
      : null;

  const idTokenHint = get('id_token_hint') ?? null;
  if (idTokenHint !== null && !isIdTokenHintShaped(idTokenHint)) return fail(new InvalidRequest(INVALID_ID_TOKEN_HINT));

  return {
    outcome: 'valid',
    request: { client, redirectUri, scopes, state, codeChallenge, codeChallengeMethod: 'S256', nonce, prompt, maxAge, loginHint, idTokenHint },
  };
}

/**
 * OpenID Connect Core §3.1.2.1: a space-delimited set of none, login, consent; `none` with any
 * other value is an error. Null when malformed or unsupported (select_account, create, ...).
 */
export function parsePrompt(value: string | undefined): ReadonlySet<Prompt> | null {
  if (value === undefined) return new Set();
  if (!/^[a-z_]+(?: [a-z_]+)*$/.test(value)) return null;
  const values = value.split(' ');
  if (!values.every((v): v is Prompt => (PROMPTS as readonly string[]).includes(v))) return null;
  const set = new Set<Prompt>(values);
  if (set.size !== values.length) return null;
  if (set.has('none') && set.size > 1) return null;
  return set;
}
