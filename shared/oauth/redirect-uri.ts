// Redirect URIs: what may be registered, and how a requested redirect_uri is matched.
//
// Matching is byte for byte (RFC 9700 §2.1, spec): no normalisation, no prefix or wildcard
// matching, because every lenient comparison has been an open redirect somewhere. The one
// exception is RFC 8252 §7.3: for loopback IP redirect URIs of native apps, the port is chosen by
// the app at run time, so any port matches; every other byte must still be equal.
//
// Registration accepts three kinds (RFC 8252 §7 for native apps, RFC 6749 §3.1.2 for all):
//   https://host[:port]/path?query          web apps and claimed https URIs
//   http://127.0.0.1[:port]/...,  http://[::1][:port]/...   loopback (native apps)
//   com.example.app:/path                   private-use scheme in reverse-domain form (RFC 8252 §7.1)
// Never: a fragment (RFC 6749 §3.1.2), userinfo, plain http to anything but a loopback IP
// literal, `localhost` (RFC 8252 §8.3: NOT RECOMMENDED, a hosts file can point it elsewhere),
// characters outside RFC 3986, or malformed percent-encoding.

export const MAX_REDIRECT_URI_LENGTH = 2000;

// RFC 3986 unreserved, reserved without "#", and "%" (checked separately).
const URI_CHARACTERS = /^[A-Za-z0-9\-._~:/?[\]@!$&'()*+,;=%]+$/;
const BAD_PERCENT = /%(?![0-9A-Fa-f]{2})/;
const HTTPS = /^https:\/\/(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?(?=[/?]|$)/;
const LOOPBACK = /^http:\/\/(127\.0\.0\.1|\[::1\])(?::(\d{1,5}))?([/?].*)?$/s;
// Reverse domain name: at least one dot, so javascript:, data:, file: and friends never qualify.
const PRIVATE_USE = /^[a-z][a-z0-9+-]*(?:\.[a-z0-9+-]+)+:\//;

function validPort(text: string | undefined): boolean {
  if (text === undefined) return true;
  const port = Number(text);
  return port >= 1 && port <= 65535;
}

/**
 * Why `uri` cannot be registered, or null when it can. `kind` only changes the wording of messages
 * (post-logout redirect URIs follow the same rules).
 */
export function redirectUriProblem(uri: string, kind = 'redirect URI'): string | null {
  if (uri.length === 0) return `a ${kind} must not be empty`;
  if (uri.length > MAX_REDIRECT_URI_LENGTH) return `a ${kind} must be at most ${MAX_REDIRECT_URI_LENGTH} characters`;
  if (uri.includes('#')) return `a ${kind} must not contain a fragment`;
  if (!URI_CHARACTERS.test(uri) || BAD_PERCENT.test(uri)) return `${kind} "${uri}" contains characters a URI cannot have`;
  try {
    new URL(uri);
  } catch {
    return `${kind} "${uri}" is not an absolute URI`;
  }
  if (uri.startsWith('https://')) {
    if (!HTTPS.test(uri)) return `${kind} "${uri}" must name a host (and no user information)`;
    return null;
  }
  if (uri.startsWith('http://')) {
    const loopback = LOOPBACK.exec(uri);
    if (!loopback) return `${kind} "${uri}" must use https (plain http is only for the loopback addresses 127.0.0.1 and [::1])`;
    if (!validPort(loopback[2])) return `${kind} "${uri}" has an invalid port`;
    return null;
  }
  if (PRIVATE_USE.test(uri)) return null;
  return `${kind} "${uri}" must use https, loopback http, or a reverse-domain private-use scheme such as com.example.app:/callback`;
}

export function isLoopbackRedirectUri(uri: string): boolean {
  return LOOPBACK.test(uri);
}

/**
 * The registered URI that `requested` stands for, or null. Exact string equality, except that a
 * loopback IP redirect URI matches with any port (or none) as long as the host and everything
 * after the port are identical.
 */
export function matchRedirectUri(registered: readonly string[], requested: string): string | null {
  if (registered.includes(requested)) return requested;
  const asked = LOOPBACK.exec(requested);
  if (!asked || !validPort(asked[2])) return null;
  for (const candidate of registered) {
    const known = LOOPBACK.exec(candidate);
    if (known && known[1] === asked[1] && (known[3] ?? '') === (asked[3] ?? '')) return candidate;
  }
  return null;
}

/**
 * Appends response parameters to a redirect URI, keeping its own query as registered (RFC 6749
 * §3.1.2: the query component MUST be retained). String concatenation, not URL re-serialisation,
 * so the URI's bytes are exactly those that were matched.
 */
export function withQueryParameters(uri: string, parameters: Readonly<Record<string, string | null | undefined>>): string {
  const query = Object.entries(parameters)
    .filter((entry): entry is [string, string] => typeof entry[1] === 'string')
    .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`)
    .join('&');
  if (query === '') return uri;
  if (!uri.includes('?')) return `${uri}?${query}`;
  return uri.endsWith('?') || uri.endsWith('&') ? `${uri}${query}` : `${uri}&${query}`;
}
