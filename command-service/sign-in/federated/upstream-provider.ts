// The upstream OpenID Provider as an openid-client Configuration, discovered from its issuer
// (OpenID Connect Discovery) and cached: discovery costs a round trip, and the metadata changes
// rarely. A failed discovery is not cached, so the next sign-in tries again; the cache is
// refreshed after an hour so a provider's moved endpoints are picked up without a restart.
// openid-client then checks everything the relying party must (issuer, iss in the authorization
// response when the provider announces it, state, PKCE, id_token signature, aud, exp, nonce).
import * as client from 'openid-client';
import type { FederationConfig } from '../../../shared/oauth/oauth-services.js';
import { checkIssuer } from '../../../shared/oauth/discovery.js';

const DISCOVERY_TTL_MS = 60 * 60 * 1000;
/** A sign-in is interactive: an upstream that does not answer in time is reported, not waited for. */
const UPSTREAM_TIMEOUT_SECONDS = 10;

/** http is allowed only for a loopback issuer (development and tests), as for our own issuer. */
export function isLoopbackHttp(issuer: string): boolean {
  const url = new URL(issuer);
  return url.protocol === 'http:' && ['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname);
}

export class UpstreamProvider {
  private cached: { readonly config: Promise<client.Configuration>; readonly at: number } | null = null;

  constructor(readonly federation: FederationConfig) {
    checkIssuer(federation.issuer);
  }

  configuration(now = Date.now()): Promise<client.Configuration> {
    if (this.cached && now - this.cached.at < DISCOVERY_TTL_MS) return this.cached.config;
    const config = this.discover();
    const entry = { config, at: now };
    this.cached = entry;
    config.catch(() => {
      if (this.cached === entry) this.cached = null;
    });
    return config;
  }

  private discover(): Promise<client.Configuration> {
    const { issuer, clientId, clientSecret } = this.federation;
    const auth = clientSecret === null ? client.None() : client.ClientSecretBasic(clientSecret);
    return client.discovery(new URL(issuer), clientId, undefined, auth, {
      execute: isLoopbackHttp(issuer) ? [client.allowInsecureRequests] : [],
      timeout: UPSTREAM_TIMEOUT_SECONDS,
    });
  }
}
