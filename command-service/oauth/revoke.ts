// POST /api/oauth/revoke (RFC 7009). Always 200 with an empty body once the client is
// authenticated: unknown, malformed, expired or foreign tokens are not errors (RFC 7009 §2.2), so
// the endpoint tells nobody whether a token exists.
//
// Refresh token: the owning client revokes its whole rotation family (RevokeRefreshToken; the
// decider ignores tokens that are not the family's or not the caller's).
// Access token: it is a self-contained JWT, so it cannot be withdrawn on its own; resource servers
// check only its family against the revocation read model. Revoking an access token therefore
// revokes its family, the grant it came from (RFC 7009 §2.1 allows revoking the underlying grant),
// which also ends the refresh token the client holds for it.
import type { HttpMiddleware } from '../../shared/http/http-state.js';
import type { RateLimiter } from '../../shared/http/rate-limit.js';
import type { CommandContext } from '../../shared/event-store/command-handler.js';
import { authenticateClient } from '../../shared/oauth/client-auth.js';
import type { OAuthClient } from '../../shared/oauth/client-decider.js';
import { oauthStreams } from '../../shared/oauth/oauth-events.js';
import { isFamilyId, parseRefreshToken } from '../../shared/oauth/opaque-credentials.js';
import { tokenFamilyDecider } from '../../shared/oauth/token-family-decider.js';
import { accessTokenAudience, verifyAccessToken } from '../../shared/oauth/tokens.js';
import { clientCommandContext } from './client-command-context.js';
import { readProtocolForm, requiredParameter } from './form-body.js';
import type { ProtocolDeps } from './protocol-deps.js';

export function revokeEndpoint(deps: ProtocolDeps, perClient: RateLimiter): HttpMiddleware {
  const { issuer } = deps.oauth;
  const audience = accessTokenAudience(issuer);

  async function revokeRefreshToken(token: string, client: OAuthClient, ctx: CommandContext): Promise<void> {
    const parsed = parseRefreshToken(token);
    if (parsed === null) return;
    await deps.handler.handle(
      oauthStreams.tokenFamily(parsed.familyId),
      tokenFamilyDecider,
      { type: 'RevokeRefreshToken', data: { familyId: parsed.familyId, clientId: client.clientId, presentedTokenHash: parsed.hash } },
      ctx,
    );
  }

  async function revokeAccessToken(token: string, client: OAuthClient, ctx: CommandContext): Promise<void> {
    let claims;
    try {
      claims = await verifyAccessToken(token, deps.oauth.verificationKeys, { issuer, audience, now: ctx.now });
    } catch {
      return; // not ours, tampered or expired: nothing left to revoke
    }
    if (claims.client_id !== client.clientId || !isFamilyId(claims.family_id)) return;
    await deps.handler.handle(
      oauthStreams.tokenFamily(claims.family_id),
      tokenFamilyDecider,
      { type: 'RevokeTokenFamily', data: { familyId: claims.family_id, reason: 'revoked_by_client' } },
      ctx,
    );
  }

  return async function revoke(ctx) {
    const form = await readProtocolForm(ctx);
    const { client } = await authenticateClient(ctx.get('authorization') || undefined, form, deps.oauth.clients);
    await perClient.admit(ctx, client.clientId);
    const token = requiredParameter(form, 'token');
    // token_type_hint (RFC 7009 §2.1) is not needed: a refresh token and a JWT cannot be mistaken.
    const context = clientCommandContext(ctx, client, new Date());
    if (parseRefreshToken(token) !== null) await revokeRefreshToken(token, client, context);
    else await revokeAccessToken(token, client, context);
    ctx.status = 200;
    ctx.body = '';
  };
}
