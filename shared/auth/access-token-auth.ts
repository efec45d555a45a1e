// OAuth access token authentication for the user-delegated endpoints (/api/v1/* and UserInfo).
//
// Checks, in the order a request meets them:
//   1. the token: `Authorization: Bearer <jwt>` only (never the query string or a form body:
//      credentials never travel in URLs), verified offline: RS256 with one of our keys, typ
//      at+jwt, our issuer, the API audience, not expired                        -> 401 invalid_token
//   2. its family is not revoked (a port: the query service reads the revoked_token_families read
//      model, the command service the family's stream)                           -> 401 invalid_token
//   3. the per-user rate limit (120 per minute, lockouts per user and client; after 2, so a
//      leaked revoked token cannot lock its user out)                            -> 429
//   4. the client it was issued to still exists (its organization is the token's organization)
//                                                                                -> 401 invalid_token
//   5. the user still exists in that organization and, where required, holds the role
//      (self_invite for /api/v1/*)                                               -> 403 insufficient_scope
//      (UserInfo asks no role; a user who is not there is                        -> 401 invalid_token)
//   6. the scope the route needs                                                 -> 403 insufficient_scope
// Then `ctx.state.principal` is the UserPrincipal. The reason of a refusal is logged for
// operators (with the family id, a name and not a secret), never the token.
import type { JWTVerifyGetKey } from 'jose';
import { InsufficientScopeError, InvalidTokenError } from '../errors.js';
import type { Role } from '../domain/events.js';
import type { HttpContext, HttpMiddleware } from '../http/http-state.js';
import { ORG_API_RATE_LIMIT, RateLimiter, type RateLimitPolicy } from '../http/rate-limit.js';
import { isFamilyId } from '../oauth/opaque-credentials.js';
import type { OAuthScope } from '../oauth/scopes.js';
import { COMPACT_JWS, accessTokenAudience, verifyAccessToken, type AccessTokenClaims } from '../oauth/tokens.js';
import type { UserPrincipal } from './principal.js';

/**
 * The spec's user-delegated limit: 120 requests per minute per user. Back-pressure only, no
 * escalating lockout: it is counted after the access token verified, so every caller it refuses
 * is authenticated (a user's own app, not a guesser), and locking a user out of their apps for a
 * day because one of them retried too eagerly would make the limit the outage. Invalid tokens
 * are refused before it and cost the user they name nothing.
 */
export const USER_API_RATE_LIMIT: RateLimitPolicy = Object.freeze({
  ...ORG_API_RATE_LIMIT,
  points: 120,
  abuseThreshold: 120,
  escalation: 'never',
});

/** The organization role every /api/v1/* endpoint of this module requires (spec). */
export const SELF_INVITE_ROLE: Role = 'self_invite';

/** Port: has the token family been revoked? */
export interface TokenRevocations {
  isRevoked(familyId: string): Promise<boolean>;
}

/** What the token's subject is now, as far as authorization cares. */
export interface TokenAccount {
  readonly orgId: number;
  readonly roles: readonly string[];
}

/** Port: the current standing of the client and the user a token names. */
export interface TokenAccounts {
  /** The organization of the client, or null when it is unknown or deleted. */
  clientOrgId(clientId: string): Promise<number | null>;
  /** The user, or null when absent. */
  user(userId: number): Promise<TokenAccount | null>;
}

export interface AccessTokenAuthOptions {
  readonly issuer: string;
  readonly verificationKeys: JWTVerifyGetKey;
  readonly revocations: TokenRevocations;
  readonly accounts: TokenAccounts;
  /** The per-user bucket; default: one of its own with USER_API_RATE_LIMIT. */
  readonly rateLimiter?: RateLimiter;
  readonly now?: () => Date;
}

export interface AccessRequirement {
  /** The organization role the user must hold; null for none (UserInfo). Default self_invite. */
  readonly role?: Role | null;
}

/** A JWT is three base64url parts; anything longer than this is not one of ours. */
const MAX_TOKEN_LENGTH = 4096;
const BEARER = /^Bearer +(\S+) *$/i;
/** User ids are positive integers; `sub` carries one as a string. */
const USER_ID = /^[1-9]\d{0,15}$/;

type Rejection = 'missing' | 'malformed' | 'unverified' | 'bad_claims' | 'family_revoked' | 'client_gone' | 'unknown_user';

class AccessTokenRejected extends InvalidTokenError {
  constructor(readonly reason: Rejection, readonly familyId: string | null = null) {
    super();
  }
}

/** The bearer token from the Authorization header; throws when absent or malformed. */
export function presentedAccessToken(ctx: Pick<HttpContext, 'get'>): string {
  const authorization = ctx.get('authorization');
  if (!authorization) throw new AccessTokenRejected('missing');
  const token = BEARER.exec(authorization)?.[1];
  if (token === undefined || token.length > MAX_TOKEN_LENGTH || !COMPACT_JWS.test(token)) throw new AccessTokenRejected('malformed');
  return token;
}

/**
 * Returns `requireAccess(scope, {role})`, the middleware for one route. Build it once per app so
 * all its routes share the per-user bucket.
 */
export function accessTokenAuth(options: AccessTokenAuthOptions): (scope: OAuthScope, requirement?: AccessRequirement) => HttpMiddleware {
  const audience = accessTokenAudience(options.issuer);
  const limiter = options.rateLimiter ?? new RateLimiter('user-api', USER_API_RATE_LIMIT);
  const now = options.now ?? (() => new Date());

  async function verified(ctx: HttpContext): Promise<{ claims: AccessTokenClaims; userId: number }> {
    const token = presentedAccessToken(ctx);
    let claims: AccessTokenClaims;
    try {
      claims = await verifyAccessToken(token, options.verificationKeys, { issuer: options.issuer, audience, now: now() });
    } catch {
      throw new AccessTokenRejected('unverified');
    }
    if (!USER_ID.test(claims.sub) || !isFamilyId(claims.family_id)) throw new AccessTokenRejected('bad_claims');
    return { claims, userId: Number(claims.sub) };
  }

  return function requireAccess(scope, requirement = {}) {
    const role = requirement.role === undefined ? SELF_INVITE_ROLE : requirement.role;
    return async function authenticateAccessToken(ctx, next) {
      let principal: UserPrincipal;
      try {
        const { claims, userId } = await verified(ctx);
        if (await options.revocations.isRevoked(claims.family_id)) throw new AccessTokenRejected('family_revoked', claims.family_id);

        // The bucket is the user's. USER_API_RATE_LIMIT never locks out; a policy that does (a
        // deployment's or a test's) aims its lockout at the (user, client) pair, so an app that
        // keeps hammering locks only itself out and the user's other apps are served after the minute.
        await limiter.admit(ctx, `user:${userId}`, {
          lockKey: `user:${userId}:client:${claims.client_id}`,
          onLockout: (notice) =>
            ctx.state.log.warn(
              { userId, clientId: claims.client_id, bucket: limiter.name, level: notice.level, seconds: notice.seconds },
              'user and client locked out after sustained rate-limit abuse',
            ),
        });

        const [orgId, user] = await Promise.all([options.accounts.clientOrgId(claims.client_id), options.accounts.user(userId)]);
        if (orgId === null) throw new AccessTokenRejected('client_gone', claims.family_id);
        principal = { kind: 'user', userId, orgId, clientId: claims.client_id, scopes: claims.scope.split(' ').filter(Boolean) };
        // Spec: a user who no longer holds the organization's role gets 403 insufficient_scope.
        // The challenge names the route's scope: the grant no longer carries that authority.
        const member = user !== null && user.orgId === orgId ? user : null;
        if (role !== null) {
          if (member === null || !member.roles.includes(role)) throw new InsufficientScopeError(scope);
        } else if (member === null) {
          // No role asked (UserInfo), but a token naming no user of its organization has no claims.
          throw new AccessTokenRejected('unknown_user', claims.family_id);
        }
        if (!principal.scopes.includes(scope)) throw new InsufficientScopeError(scope);
      } catch (error) {
        if (error instanceof AccessTokenRejected) {
          ctx.state.log.info({ reason: error.reason, familyId: error.familyId }, 'access token rejected');
        }
        throw error;
      }
      ctx.state.principal = principal;
      await next();
    };
  };
}

/** The UserPrincipal of a route behind accessTokenAuth. */
export function userPrincipal(ctx: Pick<HttpContext, 'state'>): UserPrincipal {
  const principal = ctx.state.principal;
  if (principal?.kind !== 'user') throw new Error('user-delegated route reached without an access token principal');
  return principal;
}
