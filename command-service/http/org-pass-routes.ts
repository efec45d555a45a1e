// Organization API, writes: create passes and revoke a pass with an organization API key.
// Attribution and the monthly invite allowance go to the admin who created the key
// (principal.userId); events record the key as actor and the request id as correlation id.
// The create handler, its 201 body and the command context serve the user-delegated writes too.
import type Router from '@koa/router';
import { serviceRouter } from '../../shared/http/service-app.js';
import { parseCreatePassRequest } from '../../shared/domain/pass-request.js';
import { apiKeyAuth } from '../../shared/auth/api-key-auth.js';
import { requireScope } from '../../shared/auth/scope-guard.js';
import { actorOf, type ApiKeyPrincipal, type Principal } from '../../shared/auth/principal.js';
import { jsonBody } from '../../shared/http/json-body.js';
import { NO_QUERY_PARAMETERS, validateQuery } from '../../shared/http/schema-validation.js';
import type { HttpContext, HttpMiddleware, HttpState } from '../../shared/http/http-state.js';
import type { CommandContext } from '../../shared/event-store/command-handler.js';
import type { CommandDeps } from '../command-deps.js';
import { createPasses, type IssuedPass } from '../passes/create-passes.js';
import { revokePass } from '../passes/revoke-pass.js';

export interface PassCreateResponse {
  success: true;
  id: number;
  public_id: string;
  qr_value: string | null;
  qr_values: string[];
  quantity: number;
  qr_sent: boolean;
  sms_sent: boolean;
  pass_link: string | null;
  message: string;
}

function apiKeyPrincipal(ctx: HttpContext): ApiKeyPrincipal {
  const principal = ctx.state.principal;
  if (principal?.kind !== 'apiKey') throw new Error('organization route reached without an API key principal');
  return principal;
}

/** The context of a write of either API: the principal as actor, the request id as correlation id. */
export function commandContext(ctx: HttpContext, principal: Principal, now: Date): CommandContext {
  return { correlationId: ctx.state.requestId, causationId: null, actor: actorOf(principal), now };
}

/** The 201 body of both creates (organization and user-delegated). */
export function passCreateResponse(passes: readonly IssuedPass[]): PassCreateResponse {
  const first = passes[0];
  if (!first) throw new Error('createPasses returned no pass');
  return {
    success: true,
    id: first.passId,
    public_id: first.publicId,
    qr_value: first.qrValue,
    qr_values: passes.map((p) => p.qrValue),
    quantity: passes.length,
    // Delivery (email, SMS, the batch's pass link) is a later issue: nothing is sent yet.
    qr_sent: false,
    sms_sent: false,
    pass_link: null,
    message: passes.length === 1 ? 'guest pass created' : `${passes.length} guest passes created`,
  };
}

/**
 * The create of both APIs, behind each one's authentication: passes attributed to and counted
 * against principal.userId. `principalOf` asserts the principal kind the route's authentication sets.
 */
export function createPassesRoute(deps: CommandDeps, principalOf: (ctx: HttpContext) => Principal): HttpMiddleware {
  return async (ctx) => {
    const principal = principalOf(ctx);
    const now = new Date();
    // The body's JSON Schema (unknown fields refused) and the rules between fields, with ajv.
    const request = parseCreatePassRequest(ctx.request.body, now);
    const { passes } = await createPasses(
      deps,
      { orgId: principal.orgId, userId: principal.userId, request },
      commandContext(ctx, principal, now),
    );
    ctx.status = 201;
    ctx.body = passCreateResponse(passes);
  };
}

export function orgPassRoutes(deps: CommandDeps, options: { trustProxy: boolean }): Router<HttpState> {
  const router = serviceRouter('/api/v1/org');
  const authenticate = apiKeyAuth({ db: deps.db, trustProxy: options.trustProxy, changes: deps.readModelChanges });

  // Neither write takes a query parameter: one sent is refused as unknown, as by the reads.
  const noQuery = validateQuery(NO_QUERY_PARAMETERS);

  router.post('/passes', authenticate, requireScope('org:passes:write'), noQuery, jsonBody(), createPassesRoute(deps, apiKeyPrincipal));

  router.delete('/passes/:public_id', authenticate, requireScope('org:passes:write'), noQuery, async (ctx) => {
    const principal = apiKeyPrincipal(ctx);
    // A malformed id cannot name a pass of the organization: revokePass answers 404 without a lookup.
    const { publicId } = await revokePass(
      deps,
      { orgId: principal.orgId, publicId: ctx.params.public_id ?? '' },
      commandContext(ctx, principal, new Date()),
    );
    ctx.body = { success: true, public_id: publicId, revoked: true };
  });

  return router;
}
