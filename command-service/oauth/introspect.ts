// POST /api/oauth/introspect (RFC 7662), for confidential clients only (spec).
//
// A client learns about its own tokens only: any token that is not active, not ours, or issued to
// another client reads exactly `{"active": false}` (RFC 7662 §2.2), so the answer never tells a
// caller whether someone else's token exists.
//
// Access tokens are verified offline (signature, typ at+jwt, issuer, audience, expiry; see
// access-token-verifier.ts for why a verification is remembered) and then their family is taken
// from its stream, the authoritative record of revocation (the read model may lag behind a
// revocation that just happened), through the command handler's cache when that is at most a
// second old. Refresh tokens are active while they are their family's current token and the
// family is live, always read fresh.
import type { HttpMiddleware } from '../../shared/http/http-state.js';
import type { RateLimiter } from '../../shared/http/rate-limit.js';
import type { LoadOptions } from '../../shared/event-store/command-handler.js';
import { authenticateClient } from '../../shared/oauth/client-auth.js';
import type { OAuthClient } from '../../shared/oauth/client-decider.js';
import { oauthStreams } from '../../shared/oauth/oauth-events.js';
import { digestsEqual, isFamilyId, parseRefreshToken } from '../../shared/oauth/opaque-credentials.js';
import { formatScope } from '../../shared/oauth/scopes.js';
import { tokenFamilyDecider, type TokenFamilyState } from '../../shared/oauth/token-family-decider.js';
import { accessTokenAudience, subjectOf } from '../../shared/oauth/tokens.js';
import { AccessTokenVerifier } from './access-token-verifier.js';
import { readProtocolForm, requiredParameter } from './form-body.js';
import type { ProtocolDeps } from './protocol-deps.js';

export type IntrospectionResponse =
  | { readonly active: false }
  | {
      readonly active: true;
      readonly scope: string;
      readonly client_id: string;
      readonly sub: string;
      readonly exp: number;
      /** Access tokens only: the family does not record when its current refresh token was issued. */
      readonly iat?: number;
      readonly token_type: 'Bearer' | 'refresh_token';
      readonly iss: string;
      readonly aud?: string;
      readonly jti?: string;
    };

const INACTIVE: IntrospectionResponse = Object.freeze({ active: false });

/** How old a cached token family may be when an access token of it is introspected. */
export const ACCESS_TOKEN_FAMILY_STALENESS_MS = 1000;

const seconds = (iso: string) => Math.floor(Date.parse(iso) / 1000);

export function introspectEndpoint(deps: ProtocolDeps, perClient: RateLimiter): HttpMiddleware {
  const { issuer } = deps.oauth;
  const accessTokens = new AccessTokenVerifier(deps.oauth.verificationKeys, { issuer, audience: accessTokenAudience(issuer) });

  const loadFamily = async (familyId: string, options?: LoadOptions): Promise<TokenFamilyState> => {
    return (await deps.handler.load(oauthStreams.tokenFamily(familyId), tokenFamilyDecider, options)).state;
  };

  async function introspectRefreshToken(token: string, client: OAuthClient, now: Date): Promise<IntrospectionResponse> {
    const parsed = parseRefreshToken(token);
    if (parsed === null) return INACTIVE;
    const family = await loadFamily(parsed.familyId);
    if (family.status !== 'active' || family.grant.clientId !== client.clientId) return INACTIVE;
    // Spent tokens are not active: only the family's current one may be presented.
    if (family.currentTokenHash === null || !digestsEqual(family.currentTokenHash, parsed.hash)) return INACTIVE;
    if (now.getTime() >= Date.parse(family.grant.expiresAt)) return INACTIVE;
    return {
      active: true,
      scope: formatScope(family.grant.scopes),
      client_id: family.grant.clientId,
      sub: subjectOf(family.grant.userId),
      exp: seconds(family.grant.expiresAt),
      token_type: 'refresh_token',
      iss: issuer,
    };
  }

  async function introspectAccessToken(token: string, client: OAuthClient): Promise<IntrospectionResponse> {
    const claims = await accessTokens.verify(token);
    if (claims === null) return INACTIVE;
    // Foreign tokens are settled before any read.
    if (claims.client_id !== client.clientId || !isFamilyId(claims.family_id)) return INACTIVE;
    // A family this process revoked (revoke, a replayed code or refresh token) is seen at once; one
    // revoked by another replica within ACCESS_TOKEN_FAMILY_STALENESS_MS. That bound is what buys
    // introspection without a read per call (signature checks are remembered as well).
    const family = await loadFamily(claims.family_id, { maxStalenessMs: ACCESS_TOKEN_FAMILY_STALENESS_MS });
    if (family.status !== 'active') return INACTIVE;
    return {
      active: true,
      scope: claims.scope,
      client_id: claims.client_id,
      sub: claims.sub,
      exp: claims.exp,
      iat: claims.iat,
      token_type: 'Bearer',
      iss: claims.iss,
      aud: claims.aud,
      jti: claims.jti,
    };
  }

  return async function introspect(ctx) {
    const form = await readProtocolForm(ctx);
    const { client } = await authenticateClient(ctx.get('authorization') || undefined, form, deps.oauth.clients, {
      confidentialOnly: true,
    });
    await perClient.admit(ctx, client.clientId);
    const token = requiredParameter(form, 'token');
    // token_type_hint (RFC 7662 §2.1) is not needed: the two kinds cannot be mistaken for each other.
    const now = new Date();
    ctx.status = 200;
    ctx.body = parseRefreshToken(token) !== null ? await introspectRefreshToken(token, client, now) : await introspectAccessToken(token, client);
  };
}
