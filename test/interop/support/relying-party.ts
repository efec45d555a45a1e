// openid-client (v6) as a relying party of the test stack: discovery of the stack's issuer (plain
// http on 127.0.0.1, hence allowInsecureRequests), a record of every request it sends (so a test
// can tell which client authentication went over the wire), and a whole authorization driven by
// openid-client on the client side and by the cookie-jar browser on the sign-in pages.
import * as client from 'openid-client';
import { Browser } from '../../sign-in/support/browser.js';
import { submitConsent, submitPassword, submitTotp } from '../../sign-in/support/sign-in-driver.js';

export type ClientAuthMethod = 'none' | 'client_secret_basic' | 'client_secret_post';

/** One request openid-client sent, as it left (headers and form body). */
export interface SentRequest {
  readonly method: string;
  readonly url: URL;
  readonly headers: Headers;
  readonly form: URLSearchParams | null;
}

export interface RelyingParty {
  readonly config: client.Configuration;
  readonly clientId: string;
  readonly redirectUri: string;
  readonly auth: ClientAuthMethod;
  /** Every request of this Configuration, discovery included, in order. */
  readonly sent: SentRequest[];
}

export interface Registration {
  readonly clientId: string;
  readonly clientSecret: string | null;
  readonly redirectUri: string;
}

function clientAuthentication(auth: ClientAuthMethod, secret: string | null): client.ClientAuth {
  if (auth === 'none') return client.None();
  if (secret === null) throw new Error(`${auth} needs the client's secret`);
  return auth === 'client_secret_basic' ? client.ClientSecretBasic(secret) : client.ClientSecretPost(secret);
}

/** client.discovery of the issuer with the given client authentication; records what it sends. */
export async function discoverRelyingParty(
  issuer: string,
  registration: Registration,
  auth: ClientAuthMethod,
  options: { readonly algorithm?: 'oidc' | 'oauth2' } = {},
): Promise<RelyingParty> {
  const sent: SentRequest[] = [];
  const recordingFetch: client.CustomFetch = async (url, init) => {
    const body = init.body;
    sent.push({
      method: init.method ?? 'GET',
      url: new URL(url),
      headers: new Headers(init.headers),
      form: body instanceof URLSearchParams ? new URLSearchParams(body) : typeof body === 'string' ? new URLSearchParams(body) : null,
    });
    return fetch(url, init as RequestInit);
  };
  const config = await client.discovery(
    new URL(issuer),
    registration.clientId,
    registration.clientSecret === null ? { token_endpoint_auth_method: auth } : { client_secret: registration.clientSecret, token_endpoint_auth_method: auth },
    clientAuthentication(auth, registration.clientSecret),
    {
      // The stack's issuer is http://127.0.0.1:PORT: openid-client refuses plain http otherwise.
      execute: [client.allowInsecureRequests],
      algorithm: options.algorithm ?? 'oidc',
      [client.customFetch]: recordingFetch,
    },
  );
  return { config, clientId: registration.clientId, redirectUri: registration.redirectUri, auth, sent };
}

/** The requests sent to one endpoint of the discovery document (token, introspection, ...). */
export function sentTo(rp: RelyingParty, endpoint: string | undefined): SentRequest[] {
  if (endpoint === undefined) throw new Error('the endpoint is not in the discovery document');
  return rp.sent.filter((r) => r.url.origin + r.url.pathname === endpoint);
}

export interface Credentials {
  readonly email: string;
  readonly password: string;
  readonly totpSecret?: string;
}

/**
 * Follows an authorization URL in the cookie-jar browser: sign-in page, second factor, consent,
 * back to authorize, until the service redirects to the client's redirect URI; returns that URL
 * (what the client's callback would receive). Each hop is checked, so a failure says where.
 */
export async function followAuthorization(browser: Browser, authorizationUrl: URL, redirectUri: string, credentials: Credentials): Promise<URL> {
  const hops: string[] = [];
  let location = authorizationUrl.href;
  for (let step = 0; step < 12; step++) {
    hops.push(location);
    if (location.startsWith(`${redirectUri}?`) || location === redirectUri) return new URL(location);
    const path = location.startsWith(browser.baseUrl) ? location.slice(browser.baseUrl.length) : location;
    if (path === '/signin') location = await submitPassword(browser, credentials.email, credentials.password);
    else if (path === '/signin/second-factor') {
      if (credentials.totpSecret === undefined) throw new Error('the service asks for a second factor: pass totpSecret');
      location = await submitTotp(browser, credentials.totpSecret);
    } else if (path === '/consent') location = await submitConsent(browser, 'allow');
    else if (path.startsWith('/api/oauth/authorize?')) {
      const res = await browser.get(path);
      if (res.status !== 302 || res.location === null) throw new Error(`GET ${path.slice(0, 60)}...: expected a 302, got ${res.status}: ${res.text.slice(0, 300)}`);
      location = res.location;
    } else throw new Error(`unexpected stop on the way: ${location} (after ${hops.join(' -> ')})`);
  }
  throw new Error(`too many hops: ${hops.join(' -> ')}`);
}

export interface SignedIn {
  readonly tokens: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers;
  /** The browser that signed in (its session cookie is the web session). */
  readonly browser: Browser;
  /** What the client's callback received. */
  readonly callback: URL;
  readonly state: string;
  readonly nonce: string;
}

/** An authorization request with PKCE S256 and a fresh state, built by openid-client. */
export async function authorizationRequest(
  rp: RelyingParty,
  parameters: Readonly<Record<string, string>> & { readonly scope: string },
): Promise<{ url: URL; verifier: string; state: string }> {
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const url = client.buildAuthorizationUrl(rp.config, {
    redirect_uri: rp.redirectUri,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    ...parameters,
  });
  return { url, verifier, state };
}

/**
 * The whole authorization code + PKCE flow as a relying party runs it: openid-client builds the
 * authorization URL (state, nonce, S256 challenge), the browser signs in, and openid-client
 * validates the callback (state, RFC 9207 iss) and exchanges the code (id_token signature,
 * issuer, audience, nonce).
 */
export async function authorizeWithOpenIdClient(
  rp: RelyingParty,
  credentials: Credentials,
  options: { readonly scope?: string } = {},
): Promise<SignedIn> {
  const nonce = client.randomNonce();
  const { url, verifier, state } = await authorizationRequest(rp, { scope: options.scope ?? 'openid profile email offline_access', nonce });
  const browser = new Browser(new URL(rp.config.serverMetadata().issuer).origin);
  const callback = await followAuthorization(browser, url, rp.redirectUri, credentials);
  const tokens = await client.authorizationCodeGrant(rp.config, callback, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce });
  return { tokens, browser, callback, state, nonce };
}
