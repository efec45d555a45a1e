// grant_type=authorization_code (RFC 6749 §4.1.3, RFC 7636 §4.5-4.6, OpenID Connect Core §3.1.3).
//
// Checks in the RFCs' order: the request's parameters (invalid_request), then the code itself,
// decided on its stream by authorizationCodeDecider: issued to this client, unexpired, same
// redirect_uri, verifier matching the challenge (each the same generic invalid_grant).
//
// A second presentation of a redeemed code is recorded (AuthorizationCodeReplayed) and revokes the
// token family the first redemption opened (RFC 6749 §4.1.2; spec "exchanging twice revokes the
// grant"); the presenter gets invalid_grant.
import type { CommandContext } from '../../../shared/event-store/command-handler.js';
import { authorizationCodeDecider, redemptionOutcome } from '../../../shared/oauth/authorization-code-decider.js';
import type { FormParameters } from '../../../shared/oauth/client-auth.js';
import type { OAuthClient } from '../../../shared/oauth/client-decider.js';
import { InvalidGrant, InvalidRequest } from '../../../shared/oauth/oauth-errors.js';
import { oauthStreams, type GrantFacts } from '../../../shared/oauth/oauth-events.js';
import { authorizationCodeHash, newRefreshToken } from '../../../shared/oauth/opaque-credentials.js';
import { isValidCodeVerifier } from '../../../shared/oauth/pkce.js';
import { DEFAULT_TOKEN_FAMILY_LIFETIME_SECONDS, tokenFamilyDecider } from '../../../shared/oauth/token-family-decider.js';
import { requiredParameter } from '../form-body.js';
import type { ProtocolDeps } from '../protocol-deps.js';
import { mintTokens, tokenResponse, type TokenResponse } from './token-response.js';

export async function exchangeAuthorizationCode(
  deps: ProtocolDeps,
  client: OAuthClient,
  form: FormParameters,
  ctx: CommandContext,
): Promise<TokenResponse> {
  const code = requiredParameter(form, 'code');
  const redirectUri = requiredParameter(form, 'redirect_uri');
  const codeVerifier = requiredParameter(form, 'code_verifier');
  // RFC 7636 §4.1: 43 to 128 unreserved characters; anything else is a malformed request, not a wrong proof.
  if (!isValidCodeVerifier(codeVerifier)) throw new InvalidRequest('The code_verifier parameter is malformed.');

  // A string that cannot be one of our codes names no stream: no read, no append.
  const codeHash = authorizationCodeHash(code);
  if (codeHash === null) throw new InvalidGrant();
  const codeStream = oauthStreams.authorizationCode(codeHash);

  // The redemption's events name only the family; the grant (user, scopes, nonce, ...) is the
  // issued code's, read from the code's state after the redemption.
  const redemption = await deps.handler.handle(
    codeStream,
    authorizationCodeDecider,
    { type: 'RedeemAuthorizationCode', data: { codeHash, clientId: client.clientId, redirectUri, codeVerifier, now: ctx.now.toISOString() } },
    ctx,
  );

  const outcome = redemptionOutcome(redemption.events);
  const familyStream = oauthStreams.tokenFamily(outcome.familyId);
  if (outcome.kind === 'replayed') {
    await deps.handler.handle(
      familyStream,
      tokenFamilyDecider,
      { type: 'RevokeTokenFamily', data: { familyId: outcome.familyId, reason: 'authorization_code_replay' } },
      ctx,
    );
    throw new InvalidGrant();
  }
  // Redeemed implies issued: this only guards a bug.
  if (redemption.state.status === 'absent') throw new InvalidGrant();
  const facts = redemption.state.code;

  const grant: GrantFacts = {
    clientId: facts.clientId,
    orgId: facts.orgId,
    userId: facts.userId,
    scopes: facts.scopes,
    authTime: facts.authTime,
    amr: facts.amr,
    sid: facts.sid,
  };
  const refreshToken = grant.scopes.includes('offline_access') ? newRefreshToken(facts.familyId) : null;
  const expiresAt = new Date(ctx.now.getTime() + DEFAULT_TOKEN_FAMILY_LIFETIME_SECONDS * 1000).toISOString();

  // Signing overlaps the family's append; the tokens are only handed out once the family exists
  // (if a racing replay revoked it first, StartTokenFamily fails with invalid_grant and they are dropped).
  // The family's id was made at random with the code, so its stream is new: no read before the
  // append, whose expected no_stream proves it (a racing replay's revocation makes it read and decide again).
  const [, minted] = await Promise.all([
    deps.handler.handle(
      familyStream,
      tokenFamilyDecider,
      {
        type: 'StartTokenFamily',
        data: { ...grant, familyId: facts.familyId, codeHash, refreshTokenHash: refreshToken?.hash ?? null, expiresAt },
      },
      ctx,
      { newStream: true },
    ),
    mintTokens(deps.oauth, { ...grant, familyId: facts.familyId, nonce: facts.nonce, expiresAt }, ctx.now),
  ]);
  return tokenResponse(minted, grant.scopes, refreshToken?.value ?? null);
}
