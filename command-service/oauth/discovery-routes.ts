// GET /.well-known/openid-configuration and /.well-known/oauth-authorization-server (identical,
// OpenID Connect Discovery and RFC 8414), and GET /.well-known/jwks.json (the public signing keys).
// Public documents without credentials: any origin may read them, and caches may keep them briefly.
import type Router from '@koa/router';
import { serviceRouter } from '../../shared/http/service-app.js';
import type { HttpState } from '../../shared/http/http-state.js';
import { discoveryDocument, OAUTH_PATHS } from '../../shared/oauth/discovery.js';
import type { OAuthServices } from '../../shared/oauth/oauth-services.js';
import { publicDocumentHeaders } from './protocol-headers.js';

/** The document only changes with a deployment. */
const DISCOVERY_MAX_AGE_SECONDS = 3600;
/**
 * Short: a rotated-in key signs at once, and a verifier that meets its unknown kid refetches the
 * set; an intermediate cache must not keep answering with the old set for long.
 */
const JWKS_MAX_AGE_SECONDS = 60;

export function discoveryRoutes(oauth: Pick<OAuthServices, 'issuer' | 'signingKeys'>): Router<HttpState> {
  const router = serviceRouter();
  // Fixed for the process (the issuer does not change): built once.
  const document = discoveryDocument(oauth.issuer);
  const serveDocument = publicDocumentHeaders(DISCOVERY_MAX_AGE_SECONDS);

  router.get(OAUTH_PATHS.openidConfiguration, serveDocument, (ctx) => {
    ctx.body = document;
  });
  router.get(OAUTH_PATHS.authorizationServerMetadata, serveDocument, (ctx) => {
    ctx.body = document;
  });
  router.get(OAUTH_PATHS.jwks, publicDocumentHeaders(JWKS_MAX_AGE_SECONDS), async (ctx) => {
    // The first key is made lazily by the first signature: a verifier fetching the set before any
    // token was issued must still find the key that will sign (current() is cached, no I/O after the first).
    await oauth.signingKeys.current();
    ctx.body = await oauth.signingKeys.jwks();
  });
  return router;
}
