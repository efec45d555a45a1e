// POST /api/v1/passes and DELETE /api/v1/passes/{public_id}: the user-delegated writes, with an
// OAuth access token (scope passes:write, organization role self_invite). Passes are attributed to
// and counted against the signed-in user; only the user's own passes can be revoked (another
// user's is 404). Body, validation, allowance and errors are those of the organization create.
//
// The token's standing is read from the authoritative streams, not the read models: a revoked
// family, a revoked role or a deleted user is refused by the very next write, with no projection
// lag (the event store is what the write is decided on anyway).
import type Router from '@koa/router';
import { serviceRouter } from '../../shared/http/service-app.js';
import { streams } from '../../shared/domain/events.js';
import { userDecider } from '../../shared/domain/user-decider.js';
import { accessTokenAuth, userPrincipal, type TokenAccounts, type TokenRevocations } from '../../shared/auth/access-token-auth.js';
import { jsonBody } from '../../shared/http/json-body.js';
import { NO_QUERY_PARAMETERS, validateQuery } from '../../shared/http/schema-validation.js';
import type { RateLimiter } from '../../shared/http/rate-limit.js';
import type { HttpState } from '../../shared/http/http-state.js';
import type { CommandHandler } from '../../shared/event-store/command-handler.js';
import type { ClientDirectory } from '../../shared/oauth/client-decider.js';
import { oauthStreams } from '../../shared/oauth/oauth-events.js';
import { tokenFamilyDecider } from '../../shared/oauth/token-family-decider.js';
import type { CommandAppDeps } from '../command-app-deps.js';
import { revokePass } from '../passes/revoke-pass.js';
import { commandContext, createPassesRoute, type PassRouteOptions } from './org-pass-routes.js';

export interface UserPassRoutesOptions extends PassRouteOptions {
  /**
   * The per-user bucket (120 per minute). Pass the query app's instance when both run in one
   * process, so reads and writes count as one bucket; omitted = one of its own.
   */
  readonly rateLimiter?: RateLimiter;
}

/** Revocation as the token family's stream says it: TokenFamilyRevoked is there the moment it is appended. */
export function streamRevocations(handler: CommandHandler): TokenRevocations {
  return {
    async isRevoked(familyId) {
      const { state } = await handler.load(oauthStreams.tokenFamily(familyId), tokenFamilyDecider);
      return state.status === 'revoked';
    },
  };
}

/** The user from their stream (roles as of the last event); the client from the client directory. */
export function streamAccounts(handler: CommandHandler, clients: ClientDirectory): TokenAccounts {
  return {
    async clientOrgId(clientId) {
      return (await clients.findClient(clientId))?.orgId ?? null;
    },
    async user(userId) {
      const { state } = await handler.load(streams.user(userId), userDecider);
      return state.status !== 'active' ? null : { orgId: state.orgId, roles: state.roles };
    },
  };
}

export function userPassRoutes(deps: CommandAppDeps, options: UserPassRoutesOptions): Router<HttpState> {
  const router = serviceRouter('/api/v1');
  const access = accessTokenAuth({
    issuer: deps.oauth.issuer,
    verificationKeys: deps.oauth.verificationKeys,
    revocations: streamRevocations(deps.handler),
    accounts: streamAccounts(deps.handler, deps.oauth.clients),
    rateLimiter: options.rateLimiter,
  });
  const authorizeWrite = access('passes:write');
  // Neither write takes a query parameter: one sent is refused as unknown, as by the reads.
  const noQuery = validateQuery(NO_QUERY_PARAMETERS);

  // Authentication before the body is read: an unauthenticated body is never parsed.
  router.post('/passes', authorizeWrite, noQuery, jsonBody(), createPassesRoute(deps, userPrincipal, options));

  router.delete('/passes/:public_id', authorizeWrite, noQuery, async (ctx) => {
    const principal = userPrincipal(ctx);
    const { publicId } = await revokePass(
      deps,
      { orgId: principal.orgId, publicId: ctx.params.public_id ?? '', createdBy: principal.userId },
      commandContext(ctx, principal, new Date()),
    );
    ctx.body = { success: true, public_id: publicId, revoked: true };
  });

  return router;
}
