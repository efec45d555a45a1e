// POST /api/oauth/token (RFC 6749 §3.2, §4.1.3, §6): the form body, client authentication, then
// the grant. Each grant type is its own module under token/.
import type { HttpMiddleware } from '../../shared/http/http-state.js';
import type { RateLimiter } from '../../shared/http/rate-limit.js';
import { authenticateClient } from '../../shared/oauth/client-auth.js';
import { UnsupportedGrantType } from '../../shared/oauth/oauth-errors.js';
import { clientCommandContext } from './client-command-context.js';
import { readProtocolForm, requiredParameter } from './form-body.js';
import type { ProtocolDeps } from './protocol-deps.js';
import { exchangeAuthorizationCode } from './token/authorization-code.js';
import { refreshAccessToken } from './token/refresh-token.js';
import type { TokenResponse } from './token/token-response.js';

export function tokenEndpoint(deps: ProtocolDeps, perClient: RateLimiter): HttpMiddleware {
  return async function issueTokens(ctx) {
    const form = await readProtocolForm(ctx);
    const grantType = requiredParameter(form, 'grant_type');
    // Public clients: client_id only (PKCE is their proof); confidential: Basic or client_secret_post.
    const { client } = await authenticateClient(ctx.get('authorization') || undefined, form, deps.oauth.clients);
    await perClient.admit(ctx, client.clientId);
    const context = clientCommandContext(ctx, client, new Date());

    let response: TokenResponse;
    switch (grantType) {
      case 'authorization_code':
        response = await exchangeAuthorizationCode(deps, client, form, context);
        break;
      case 'refresh_token':
        response = await refreshAccessToken(deps, client, form, context);
        break;
      default:
        throw new UnsupportedGrantType();
    }
    ctx.status = 200;
    ctx.body = response;
  };
}
