// The discovery document, served with identical content at /.well-known/openid-configuration
// (OpenID Connect Discovery) and /.well-known/oauth-authorization-server (RFC 8414).
// Everything advertised here is what the endpoints actually do; in particular the request and
// request_uri parameters are declared unsupported (Discovery defaults request_uri support to true).
import { OAUTH_SCOPES } from './scopes.js';
import { CODE_CHALLENGE_METHOD } from './pkce.js';
import { SIGNING_ALGORITHM } from './signing-keys.js';

export const OAUTH_PATHS = {
  authorize: '/api/oauth/authorize',
  token: '/api/oauth/token',
  introspect: '/api/oauth/introspect',
  revoke: '/api/oauth/revoke',
  userinfo: '/api/oauth/userinfo',
  logout: '/api/oauth/logout',
  jwks: '/.well-known/jwks.json',
  openidConfiguration: '/.well-known/openid-configuration',
  authorizationServerMetadata: '/.well-known/oauth-authorization-server',
} as const;

export const CLAIMS_SUPPORTED = [
  'sub',
  'iss',
  'aud',
  'exp',
  'iat',
  'auth_time',
  'amr',
  'nonce',
  'sid',
  'azp',
  'at_hash',
  'name',
  'given_name',
  'family_name',
  'picture',
  'email',
  'email_verified',
] as const;

/**
 * The issuer identifier: an https URL (http only for a loopback host, in development and tests)
 * with no query or fragment (RFC 8414 §2) and no trailing slash, so `${issuer}/path` is exact.
 */
export function checkIssuer(issuer: string): string {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new TypeError(`issuer "${issuer}" is not an absolute URL`);
  }
  const loopback = ['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    throw new TypeError(`issuer "${issuer}" must use https`);
  }
  if (url.search || url.hash || issuer.includes('?') || issuer.includes('#')) {
    throw new TypeError(`issuer "${issuer}" must not have a query or fragment`);
  }
  if (issuer.endsWith('/')) throw new TypeError(`issuer "${issuer}" must not end with a slash`);
  return issuer;
}

export function discoveryDocument(issuer: string): Readonly<Record<string, unknown>> {
  checkIssuer(issuer);
  const at = (path: string) => `${issuer}${path}`;
  return {
    issuer,
    authorization_endpoint: at(OAUTH_PATHS.authorize),
    token_endpoint: at(OAUTH_PATHS.token),
    jwks_uri: at(OAUTH_PATHS.jwks),
    userinfo_endpoint: at(OAUTH_PATHS.userinfo),
    end_session_endpoint: at(OAUTH_PATHS.logout),
    introspection_endpoint: at(OAUTH_PATHS.introspect),
    revocation_endpoint: at(OAUTH_PATHS.revoke),
    scopes_supported: [...OAUTH_SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: [CODE_CHALLENGE_METHOD],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    // Introspection is for confidential clients only (spec).
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    id_token_signing_alg_values_supported: [SIGNING_ALGORITHM],
    subject_types_supported: ['public'],
    claims_supported: [...CLAIMS_SUPPORTED],
    prompt_values_supported: ['none', 'login', 'consent'],
    authorization_response_iss_parameter_supported: true,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
    claims_parameter_supported: false,
  };
}
