// OAuth 2.0 protocol errors, one class per RFC error code (RFC 6749 §4.1.2.1 and §5.2, RFC 7009,
// OpenID Connect Core §3.1.2.6). They extend DomainError so the one error middleware renders
// them; it renders every OAuthError as `{error, error_description}` (toOAuthErrorBody), never
// the business-error shape. Descriptions are generic on purpose: they must not tell an attacker
// which check failed (unknown client vs wrong secret, expired vs spent code).
import { DomainError } from '../errors.js';

export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'unsupported_token_type'
  | 'invalid_scope'
  | 'access_denied'
  | 'interaction_required'
  | 'login_required'
  | 'consent_required'
  | 'request_not_supported'
  | 'request_uri_not_supported'
  | 'server_error'
  | 'temporarily_unavailable';

export abstract class OAuthError extends DomainError {
  abstract override readonly code: OAuthErrorCode;
  /** The `error_description`: human readable, generic, safe to show to anyone. */
  get description(): string {
    return this.message;
  }
}

/** 400: a parameter is missing, repeated, unsupported or malformed. */
export class InvalidRequest extends OAuthError {
  readonly status = 400;
  readonly code = 'invalid_request';
  constructor(description = 'The request is missing a required parameter or is otherwise malformed.') {
    super(description);
  }
}

/**
 * 401: client authentication failed (unknown client, no or wrong credentials, method not allowed).
 * When the client tried HTTP Basic, RFC 6749 §5.2 requires a `WWW-Authenticate` challenge of the
 * same scheme: `challenge` carries it and the middleware sets the header when it is non-null.
 */
export class InvalidClient extends OAuthError {
  readonly status = 401;
  readonly code = 'invalid_client';
  constructor(
    readonly challenge: string | null = null,
    description = 'Client authentication failed.',
  ) {
    super(description);
  }
}

/** 400: the code or refresh token is invalid, expired, revoked, spent, or bound to another client or redirect_uri. */
export class InvalidGrant extends OAuthError {
  readonly status = 400;
  readonly code = 'invalid_grant';
  constructor(description = 'The provided authorization grant is invalid, expired or revoked.') {
    super(description);
  }
}

/** 400: the authenticated client may not use this grant type. */
export class UnauthorizedClient extends OAuthError {
  readonly status = 400;
  readonly code = 'unauthorized_client';
  constructor(description = 'The client is not authorized to use this grant type.') {
    super(description);
  }
}

/** 400: the token endpoint does not support this grant_type. */
export class UnsupportedGrantType extends OAuthError {
  readonly status = 400;
  readonly code = 'unsupported_grant_type';
  constructor(description = 'The grant type is not supported.') {
    super(description);
  }
}

/** 400 (redirected at authorize): only response_type=code is supported. */
export class UnsupportedResponseType extends OAuthError {
  readonly status = 400;
  readonly code = 'unsupported_response_type';
  constructor(description = 'The response type is not supported.') {
    super(description);
  }
}

/** 400 (RFC 7009 §2.2.1): revocation of this token type is not supported. */
export class UnsupportedTokenType extends OAuthError {
  readonly status = 400;
  readonly code = 'unsupported_token_type';
  constructor(description = 'The token type is not supported.') {
    super(description);
  }
}

/** 400: the requested scope is unknown, malformed or exceeds what the client or grant allows. */
export class InvalidScope extends OAuthError {
  readonly status = 400;
  readonly code = 'invalid_scope';
  constructor(description = 'The requested scope is invalid, unknown or malformed.') {
    super(description);
  }
}

/** Redirected at authorize: the user or the server denied the request (e.g. consent refused). */
export class AccessDenied extends OAuthError {
  readonly status = 403;
  readonly code = 'access_denied';
  constructor(description = 'The request was denied.') {
    super(description);
  }
}

/** Redirected at authorize with prompt=none: some user interaction would be needed. */
export class InteractionRequired extends OAuthError {
  readonly status = 400;
  readonly code = 'interaction_required';
  constructor(description = 'User interaction is required.') {
    super(description);
  }
}

/** Redirected at authorize with prompt=none: the user must sign in (again). */
export class LoginRequired extends OAuthError {
  readonly status = 400;
  readonly code = 'login_required';
  constructor(description = 'The user must sign in.') {
    super(description);
  }
}

/** Redirected at authorize with prompt=none: the user has not consented to the requested scopes. */
export class ConsentRequired extends OAuthError {
  readonly status = 400;
  readonly code = 'consent_required';
  constructor(description = 'The user must consent to the requested scopes.') {
    super(description);
  }
}

/** Redirected at authorize (OIDC Core §6): request objects are not supported. */
export class RequestNotSupported extends OAuthError {
  readonly status = 400;
  readonly code = 'request_not_supported';
  constructor(description = 'The request parameter is not supported.') {
    super(description);
  }
}

/** Redirected at authorize (OIDC Core §6): request_uri is not supported. */
export class RequestUriNotSupported extends OAuthError {
  readonly status = 400;
  readonly code = 'request_uri_not_supported';
  constructor(description = 'The request_uri parameter is not supported.') {
    super(description);
  }
}

/** 500: an unexpected condition; the detail goes to the log, never to the client. */
export class ServerError extends OAuthError {
  readonly status = 500;
  readonly code = 'server_error';
  constructor(description = 'The authorization server encountered an unexpected condition.') {
    super(description);
  }
}

/**
 * 503: a part the server stands on is down, or it is in maintenance (rate limiting itself is
 * RateLimitedError, rendered as 429); answered with Retry-After.
 */
export class TemporarilyUnavailable extends OAuthError {
  readonly status = 503;
  readonly code = 'temporarily_unavailable';
  constructor(
    description = 'The authorization server is temporarily unavailable.',
    readonly retryAfterSeconds = 5,
  ) {
    super(description);
  }
}

export interface OAuthErrorBody {
  readonly error: OAuthErrorCode;
  readonly error_description: string;
}

// RFC 6749 §5.2: error_description MUST NOT include characters outside %x20-21 / %x23-5B / %x5D-7E.
const DESCRIPTION_FORBIDDEN = /[^\x20-\x21\x23-\x5b\x5d-\x7e]/g;

/** The response body (token, introspect, revoke endpoints; 400 at authorize) or redirect parameters. */
export function toOAuthErrorBody(error: OAuthError): OAuthErrorBody {
  return { error: error.code, error_description: error.description.replace(DESCRIPTION_FORBIDDEN, '') };
}

/** Anything thrown that is not an OAuthError becomes server_error: nothing internal reaches the client. */
export function asOAuthError(error: unknown): OAuthError {
  return error instanceof OAuthError ? error : new ServerError();
}
