// The scopes an OAuth client can be granted (spec, "Scopes for OAuth clients"), and the parsing of
// the space-delimited `scope` parameter (RFC 6749 §3.3).
import { InvalidScope } from './oauth-errors.js';

export const OAUTH_SCOPES = [
  'openid',
  'profile',
  'email',
  'offline_access',
  'passes:read',
  'passes:write',
  'invites:read',
  'members:read',
] as const;

export type OAuthScope = (typeof OAUTH_SCOPES)[number];

/** What each scope grants, as the consent page shows it. */
export const SCOPE_DESCRIPTIONS: Readonly<Record<OAuthScope, string>> = {
  openid: 'Verify your identity',
  profile: 'Your name and profile photo',
  email: 'Your email address',
  offline_access: 'Stay signed in (access while you are away)',
  'passes:read': 'View your guest passes',
  'passes:write': 'Create and revoke your guest passes',
  'invites:read': 'View invitations addressed to you',
  'members:read': "Read your organization's member directory",
};

/** What an authorize request without `scope` asks for (spec), narrowed to what the client may have. */
export const DEFAULT_SCOPES: readonly OAuthScope[] = ['openid', 'profile', 'email'];

// RFC 6749 §3.3: scope = scope-token *( SP scope-token ); scope-token = 1*( %x21 / %x23-5B / %x5D-7E ).
const SCOPE_SYNTAX = /^[\x21\x23-\x5b\x5d-\x7e]+(?: [\x21\x23-\x5b\x5d-\x7e]+)*$/;

export function isOAuthScope(value: string): value is OAuthScope {
  return (OAUTH_SCOPES as readonly string[]).includes(value);
}

/**
 * The distinct tokens of a `scope` value, or null when it breaks the RFC 6749 grammar (leading,
 * trailing or doubled spaces, tabs, quotes, backslashes, control or non-ASCII characters).
 */
export function parseScopeParameter(value: string): string[] | null {
  if (!SCOPE_SYNTAX.test(value)) return null;
  return [...new Set(value.split(' '))];
}

/** Canonical order (the table's), so equal sets always print the same. */
export function sortScopes(scopes: Iterable<string>): OAuthScope[] {
  const set = new Set(scopes);
  return OAUTH_SCOPES.filter((s) => set.has(s));
}

/** The `scope` string of a token response, introspection or access token. */
export function formatScope(scopes: Iterable<string>): string {
  return sortScopes(scopes).join(' ');
}

export function isSubset(requested: Iterable<string>, allowed: Iterable<string>): boolean {
  const pool = new Set(allowed);
  for (const s of requested) if (!pool.has(s)) return false;
  return true;
}

/**
 * The scopes an authorize request asks for, checked against the client's allowed scopes.
 * Absent (or empty, which RFC 6749 §3.1 says is the same) means the default, narrowed to what the
 * client may have; an empty result is invalid_scope. Unknown, malformed or not-allowed scopes are
 * invalid_scope (RFC 6749 §4.1.2.1).
 */
export function requestedScopes(parameter: string | undefined, allowed: readonly string[]): OAuthScope[] {
  if (parameter === undefined || parameter === '') {
    const scopes = DEFAULT_SCOPES.filter((s) => allowed.includes(s));
    if (scopes.length === 0) throw new InvalidScope();
    return sortScopes(scopes);
  }
  const tokens = parseScopeParameter(parameter);
  if (tokens === null) throw new InvalidScope();
  for (const token of tokens) {
    if (!isOAuthScope(token) || !allowed.includes(token)) throw new InvalidScope();
  }
  return sortScopes(tokens);
}

/**
 * RFC 6749 §6: a refresh request may narrow the scope but never widen it. Absent or empty means
 * the whole original grant.
 */
export function narrowedScopes(parameter: string | undefined, granted: readonly string[]): OAuthScope[] {
  if (parameter === undefined || parameter === '') return sortScopes(granted);
  const tokens = parseScopeParameter(parameter);
  if (tokens === null || !isSubset(tokens, granted)) throw new InvalidScope();
  return sortScopes(tokens);
}
