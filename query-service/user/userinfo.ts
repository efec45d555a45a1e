// GET and POST /api/oauth/userinfo (OpenID Connect Core §5.3): the signed-in user's claims, gated
// by the access token's scopes. `sub` always (the same string as the id_token's); `profile`:
// name, given_name, family_name; `email`: email, email_verified.
//
// Choices:
// * `picture` is never returned: the service stores no photo, and OIDC Core §5.3.2 says a claim
//   without a value is omitted rather than sent as null or empty.
// * `email_verified` is false: addresses are entered by an organization admin (or an invitation)
//   and the service never proves that the user controls the mailbox. Claiming true would let a
//   relying party link accounts on an address nobody verified.
// * POST is identical to GET; its body is not read (the token is taken from the Authorization
//   header only, never from a form field).
import type Router from '@koa/router';
import type { Knex } from 'knex';
import { READ_MODELS, type UserRow } from '../../shared/db/read-models.js';
import { InvalidTokenError } from '../../shared/errors.js';
import type { HttpMiddleware, HttpState } from '../../shared/http/http-state.js';
import { userPrincipal } from '../../shared/auth/access-token-auth.js';
import { OAUTH_PATHS } from '../../shared/oauth/discovery.js';

export interface UserInfoClaims {
  sub: string;
  name?: string;
  given_name?: string;
  family_name?: string;
  email?: string;
  email_verified?: boolean;
}

type ClaimSource = Pick<UserRow, 'user_id' | 'first_name' | 'last_name' | 'email'>;

/** The claims the scopes allow. Pure. */
export function userInfoClaims(user: ClaimSource, scopes: readonly string[]): UserInfoClaims {
  const claims: UserInfoClaims = { sub: String(user.user_id) };
  if (scopes.includes('profile')) {
    claims.name = `${user.first_name} ${user.last_name}`;
    claims.given_name = user.first_name;
    claims.family_name = user.last_name;
  }
  if (scopes.includes('email')) {
    claims.email = user.email;
    claims.email_verified = false;
  }
  return claims;
}

export function userInfoRoute(router: Router<HttpState>, deps: { db: Knex; authorize: HttpMiddleware }): void {
  const answer = async (ctx: Parameters<HttpMiddleware>[0]) => {
    const { userId, scopes } = userPrincipal(ctx);
    const user = await deps.db<UserRow>(READ_MODELS.users).where({ user_id: userId }).first('user_id', 'first_name', 'last_name', 'email');
    // Authentication found the user a moment ago; gone now is the same as a token naming no one.
    if (!user) throw new InvalidTokenError();
    ctx.body = userInfoClaims({ ...user, user_id: Number(user.user_id) }, scopes);
  };
  router.get(OAUTH_PATHS.userinfo, deps.authorize, answer);
  router.post(OAUTH_PATHS.userinfo, deps.authorize, answer);
}
