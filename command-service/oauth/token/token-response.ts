// The successful token response (RFC 6749 §5.1, OpenID Connect Core §3.1.3.3): a fresh access
// token, an id_token when the scopes include openid, and the refresh token when there is one.
import type { AuthenticationMethod } from '../../../shared/oauth/oauth-events.js';
import type { OAuthServices } from '../../../shared/oauth/oauth-services.js';
import { formatScope, type OAuthScope } from '../../../shared/oauth/scopes.js';
import { accessTokenAudience, mintAccessToken, mintIdToken, subjectOf } from '../../../shared/oauth/tokens.js';

export interface TokenResponse {
  readonly access_token: string;
  readonly token_type: 'Bearer';
  readonly expires_in: number;
  readonly scope: string;
  readonly id_token?: string;
  readonly refresh_token?: string;
}

/** What the tokens of one response say about the grant they come from. */
export interface TokenGrant {
  readonly familyId: string;
  readonly clientId: string;
  readonly userId: number;
  /** The scopes of this response's access token (a refresh may have narrowed them). */
  readonly scopes: readonly OAuthScope[];
  readonly authTime: string;
  readonly amr: readonly AuthenticationMethod[];
  readonly sid: string;
  /** Only in the id_token of the code exchange (OIDC Core §12.2: not on refresh). */
  readonly nonce: string | null;
  /** The family's end: no access token outlives its grant. */
  readonly expiresAt: string;
}

export interface MintedTokens {
  readonly accessToken: string;
  readonly expiresIn: number;
  readonly idToken: string | null;
}

/**
 * Signs the access token and then, for openid, the id_token: the id_token's at_hash binds it to
 * this very access token (OIDC Core §3.1.3.6), so the two signatures are in sequence. Callers
 * overlap this with their own append instead.
 */
export async function mintTokens(oauth: Pick<OAuthServices, 'issuer' | 'signingKeys'>, grant: TokenGrant, now: Date): Promise<MintedTokens> {
  const key = await oauth.signingKeys.current();
  const subject = subjectOf(grant.userId);
  const access = await mintAccessToken(key, {
    issuer: oauth.issuer,
    audience: accessTokenAudience(oauth.issuer),
    subject,
    clientId: grant.clientId,
    scopes: grant.scopes,
    familyId: grant.familyId,
    now,
    notAfter: new Date(grant.expiresAt),
  });
  const idToken = grant.scopes.includes('openid')
    ? await mintIdToken(key, {
        issuer: oauth.issuer,
        subject,
        clientId: grant.clientId,
        nonce: grant.nonce,
        authTime: grant.authTime,
        amr: grant.amr,
        sid: grant.sid,
        accessToken: access.token,
        now,
      })
    : null;
  return { accessToken: access.token, expiresIn: access.expiresIn, idToken };
}

export function tokenResponse(minted: MintedTokens, scopes: readonly OAuthScope[], refreshToken: string | null): TokenResponse {
  return {
    access_token: minted.accessToken,
    token_type: 'Bearer',
    expires_in: minted.expiresIn,
    // RFC 6749 §5.1 requires it only when it differs from the request; always sent, so clients need not guess.
    scope: formatScope(scopes),
    ...(minted.idToken !== null ? { id_token: minted.idToken } : {}),
    ...(refreshToken !== null ? { refresh_token: refreshToken } : {}),
  };
}
