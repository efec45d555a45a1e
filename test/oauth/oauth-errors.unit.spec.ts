import { expect } from 'chai';
import { DomainError } from '../../shared/errors.js';
import {
  AccessDenied,
  ConsentRequired,
  InteractionRequired,
  InvalidClient,
  InvalidGrant,
  InvalidRequest,
  InvalidScope,
  LoginRequired,
  OAuthError,
  RequestNotSupported,
  RequestUriNotSupported,
  ServerError,
  TemporarilyUnavailable,
  UnauthorizedClient,
  UnsupportedGrantType,
  UnsupportedResponseType,
  UnsupportedTokenType,
  asOAuthError,
  toOAuthErrorBody,
} from '../../shared/oauth/oauth-errors.js';

describe('OAuth errors', () => {
  const table: Array<[OAuthError, string, number]> = [
    [new InvalidRequest(), 'invalid_request', 400],
    [new InvalidClient(), 'invalid_client', 401],
    [new InvalidGrant(), 'invalid_grant', 400],
    [new UnauthorizedClient(), 'unauthorized_client', 400],
    [new UnsupportedGrantType(), 'unsupported_grant_type', 400],
    [new UnsupportedResponseType(), 'unsupported_response_type', 400],
    [new UnsupportedTokenType(), 'unsupported_token_type', 400],
    [new InvalidScope(), 'invalid_scope', 400],
    [new AccessDenied(), 'access_denied', 403],
    [new InteractionRequired(), 'interaction_required', 400],
    [new LoginRequired(), 'login_required', 400],
    [new ConsentRequired(), 'consent_required', 400],
    [new RequestNotSupported(), 'request_not_supported', 400],
    [new RequestUriNotSupported(), 'request_uri_not_supported', 400],
    [new ServerError(), 'server_error', 500],
    [new TemporarilyUnavailable(), 'temporarily_unavailable', 503],
  ];

  for (const [error, code, status] of table) {
    it(`${error.constructor.name} is ${code}, ${status}, with a generic description`, () => {
      expect(error).to.be.instanceOf(DomainError);
      expect(error.code).to.equal(code);
      expect(error.status).to.equal(status);
      expect(error.name).to.equal(error.constructor.name);
      const body = toOAuthErrorBody(error);
      expect(Object.keys(body)).to.deep.equal(['error', 'error_description']);
      expect(body.error).to.equal(code);
      expect(body.error_description).to.match(/^[\x20-\x21\x23-\x5b\x5d-\x7e]+$/);
    });
  }

  it('InvalidClient carries the Basic challenge only when asked', () => {
    expect(new InvalidClient().challenge).to.equal(null);
    expect(new InvalidClient('Basic realm="guestpass"').challenge).to.equal('Basic realm="guestpass"');
  });

  it('strips characters RFC 6749 §5.2 forbids from the description', () => {
    expect(toOAuthErrorBody(new InvalidRequest('bad "quote" \\ and é\n')).error_description).to.equal('bad quote  and ');
  });

  it('turns anything else into server_error without leaking its message', () => {
    const error = asOAuthError(new Error('connection to 10.0.0.5 refused'));
    expect(error).to.be.instanceOf(ServerError);
    expect(toOAuthErrorBody(error).error_description).to.not.match(/10\.0/);
    const grant = new InvalidGrant();
    expect(asOAuthError(grant)).to.equal(grant);
  });
});
