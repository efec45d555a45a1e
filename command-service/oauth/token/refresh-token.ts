// grant_type=refresh_token (RFC 6749 §6, RFC 9700 §4.14.2, OpenID Connect Core §12.2).
//
// Every refresh rotates: the presented token is spent and a new one returned. The rotation is one
// append on the family's stream with the revision the decider saw, so of two refreshes of one
// token only one can rotate; presenting a spent token (a replay, or the loser of such a race)
// makes the decider revoke the whole family, and the caller gets invalid_grant.
import type { CommandContext } from '../../../shared/event-store/command-handler.js';
import type { FormParameters } from '../../../shared/oauth/client-auth.js';
import type { OAuthClient } from '../../../shared/oauth/client-decider.js';
import { InvalidGrant } from '../../../shared/oauth/oauth-errors.js';
import { oauthStreams } from '../../../shared/oauth/oauth-events.js';
import { newRefreshToken, parseRefreshToken } from '../../../shared/oauth/opaque-credentials.js';
import { assertRotated, refreshedScopes, tokenFamilyDecider, type FamilyGrant } from '../../../shared/oauth/token-family-decider.js';
import { optionalParameter, requiredParameter } from '../form-body.js';
import type { ProtocolDeps } from '../protocol-deps.js';
import { mintTokens, tokenResponse, type MintedTokens, type TokenResponse } from './token-response.js';
import type { OAuthScope } from '../../../shared/oauth/scopes.js';

export async function refreshAccessToken(
  deps: ProtocolDeps,
  client: OAuthClient,
  form: FormParameters,
  ctx: CommandContext,
): Promise<TokenResponse> {
  const presented = requiredParameter(form, 'refresh_token');
  const scope = optionalParameter(form, 'scope');

  // Not of our form: names no family, so nothing is read and nothing can be revoked.
  const parsed = parseRefreshToken(presented);
  if (parsed === null) throw new InvalidGrant();
  const { familyId, hash } = parsed;
  const next = newRefreshToken(familyId);
  const stream = oauthStreams.tokenFamily(familyId);

  // A family's grant never changes once started, so the tokens are signed while the rotation is
  // appended, from the grant as this process knows it (read when it knows nothing; the read also
  // serves the rotation). They leave only if the rotation succeeds on that very grant.
  const known = await deps.handler.load(stream, tokenFamilyDecider, { maxStalenessMs: Number.POSITIVE_INFINITY });
  const knownGrant = known.state.status === 'active' && known.state.grant.clientId === client.clientId ? known.state.grant : null;
  const early = knownGrant ? mintFrom(deps, knownGrant, familyId, scope, ctx.now) : null;
  early?.catch(() => undefined); // a rejected rotation discards it

  // The decider checks client, spent/current token, expiry and scope (invalid_scope on widening).
  // The grant to mint from is the family's, unchanged by rotation: read from its state after it.
  const rotation = await deps.handler.handle(
    stream,
    tokenFamilyDecider,
    {
      type: 'RotateRefreshToken',
      data: { familyId, clientId: client.clientId, presentedTokenHash: hash, newTokenHash: next.hash, scope, now: ctx.now.toISOString() },
    },
    ctx,
  );
  assertRotated(rotation.events);
  const grant = rotation.state.status === 'absent' ? null : rotation.state.grant;
  // Rotated implies started; guards a bug only.
  if (grant === null) throw new InvalidGrant();

  const { minted, scopes } = early && grant === knownGrant ? await early : await mintFrom(deps, grant, familyId, scope, ctx.now);
  return tokenResponse(minted, scopes, next.value);
}

async function mintFrom(
  deps: ProtocolDeps,
  grant: FamilyGrant,
  familyId: string,
  scope: string | undefined,
  now: Date,
): Promise<{ minted: MintedTokens; scopes: OAuthScope[] }> {
  const scopes = refreshedScopes(grant, scope);
  const minted = await mintTokens(
    deps.oauth,
    {
      familyId,
      clientId: grant.clientId,
      userId: grant.userId,
      scopes,
      authTime: grant.authTime,
      amr: grant.amr,
      sid: grant.sid,
      nonce: null,
      expiresAt: grant.expiresAt,
    },
    now,
  );
  return { minted, scopes };
}
