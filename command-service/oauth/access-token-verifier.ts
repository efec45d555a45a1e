// Offline verification of our access tokens at introspection, remembered per token.
//
// A resource server introspects the same access token on every API call it receives during the
// token's 15 minutes, and a signature that verified once stays valid: what can change is
// revocation, which the caller checks on every request (the family's stream). So a verified
// token's claims are kept, keyed by the token's SHA-256 (no bearer token is kept in memory), and
// reused until the token expires or `maxAgeMs` passes, whichever is first. maxAgeMs matches how
// long the verification key set itself is cached (refreshingKeySet), so removing a key from the
// set takes effect here no later than there.
import type { JWTVerifyGetKey } from 'jose';
import { sha256Hex } from '../../shared/oauth/opaque-credentials.js';
import { verifyAccessToken, type AccessTokenClaims } from '../../shared/oauth/tokens.js';

export interface AccessTokenVerifierOptions {
  readonly maxEntries?: number;
  readonly maxAgeMs?: number;
  readonly clock?: () => number;
}

export class AccessTokenVerifier {
  private readonly verified = new Map<string, { readonly claims: AccessTokenClaims; readonly until: number }>();
  private readonly maxEntries: number;
  private readonly maxAgeMs: number;
  private readonly clock: () => number;

  constructor(
    private readonly keys: JWTVerifyGetKey,
    private readonly expected: { readonly issuer: string; readonly audience: string },
    options: AccessTokenVerifierOptions = {},
  ) {
    this.maxEntries = options.maxEntries ?? 10_000;
    this.maxAgeMs = options.maxAgeMs ?? 60_000;
    this.clock = options.clock ?? Date.now;
  }

  /** The claims of a valid, unexpired access token of ours; null for anything else. */
  async verify(token: string): Promise<AccessTokenClaims | null> {
    const now = this.clock();
    const key = sha256Hex(token);
    const known = this.verified.get(key);
    if (known && now < known.until) return known.claims;
    if (known) this.verified.delete(key);

    let claims: AccessTokenClaims;
    try {
      claims = await verifyAccessToken(token, this.keys, { ...this.expected, now: new Date(now) });
    } catch {
      return null;
    }
    this.verified.set(key, { claims, until: Math.min(claims.exp * 1000, now + this.maxAgeMs) });
    if (this.verified.size > this.maxEntries) {
      const oldest = this.verified.keys().next().value;
      if (oldest !== undefined) this.verified.delete(oldest);
    }
    return claims;
  }
}
