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
import type { DeliveryChannel } from '../../shared/domain/delivery-events.js';
import type { DeliveryWatch } from '../../shared/delivery/delivery-outcomes.js';
import { READ_MODELS } from '../../shared/db/read-models.js';

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

/** What became of the batch's messages by the time the create answers. */
export interface DeliveryAnswer {
  readonly qrSent: boolean;
  readonly smsSent: boolean;
  /** `{base}/p/{token}`. */
  readonly passLink: string;
}

/** The 201 body of both creates (organization and user-delegated). */
export function passCreateResponse(passes: readonly IssuedPass[], delivery: DeliveryAnswer): PassCreateResponse {
  const first = passes[0];
  if (!first) throw new Error('createPasses returned no pass');
  return {
    success: true,
    id: first.passId,
    public_id: first.publicId,
    qr_value: first.qrValue,
    qr_values: passes.map((p) => p.qrValue),
    quantity: passes.length,
    qr_sent: delivery.qrSent,
    sms_sent: delivery.smsSent,
    pass_link: delivery.passLink,
    message: passes.length === 1 ? 'guest pass created' : `${passes.length} guest passes created`,
  };
}

/**
 * The create of both APIs, behind each one's authentication: passes attributed to and counted
 * against principal.userId. `principalOf` asserts the principal kind the route's authentication sets.
 */
export function createPassesRoute(deps: CommandDeps, principalOf: (ctx: HttpContext) => Principal, options: PassRouteOptions): HttpMiddleware {
  return async (ctx) => {
    const principal = principalOf(ctx);
    const now = new Date();
    // The body's JSON Schema (unknown fields refused) and the rules between fields, with ajv.
    const request = parseCreatePassRequest(ctx.request.body);
    const channels = [...(request.email ? (['email'] as const) : []), ...(request.phone ? (['sms'] as const) : [])];
    let watch: DeliveryWatch | null = null;
    try {
      const { passes, passLinkToken, batchId, repeated } = await createPasses(
        deps,
        { orgId: principal.orgId, userId: principal.userId, request },
        commandContext(ctx, principal, now),
        { beforeAppend: (batchId) => void (watch = channels.length > 0 ? (deps.deliveryOutcomes?.watch(batchId) ?? null) : null) },
      );
      // The request made its batch before (it arrived again): the answer is that batch's delivery.
      if (repeated && channels.length > 0) {
        (watch as DeliveryWatch | null)?.cancel();
        watch = deps.deliveryOutcomes?.watch(batchId, { appended: true }) ?? null;
      }
      const sent = watch ? await awaitDelivery(deps, watch, channels) : { qrSent: false, smsSent: false };
      ctx.status = 201;
      ctx.body = passCreateResponse(passes, { ...sent, passLink: `${options.passLinkBase}/p/${passLinkToken}` });
    } finally {
      (watch as DeliveryWatch | null)?.cancel();
    }
  };
}

export interface PassRouteOptions {
  readonly trustProxy: boolean;
  /** PUBLIC_BASE_URL (the issuer): the pass links' origin. */
  readonly passLinkBase: string;
}

/**
 * Waits up to DELIVERY_WAIT_MS for the batch's messages to be accepted, then for the pass
 * listings to show it (read-your-writes of `delivery`). Past the wait a channel still pending
 * reads as not sent; delivery goes on in the background.
 */
async function awaitDelivery(deps: CommandDeps, watch: DeliveryWatch, channels: readonly DeliveryChannel[]): Promise<Omit<DeliveryAnswer, 'passLink'>> {
  const waitMs = deps.deliveryWaitMs ?? 0;
  const started = Date.now();
  const { state, position } = await watch.until(channels, waitMs);
  if (position) await deps.watermark.waitFor(position, Math.max(0, waitMs - (Date.now() - started)), [READ_MODELS.passBatches]);
  return { qrSent: state.email.status === 'sent', smsSent: state.sms.status === 'sent' };
}

export function orgPassRoutes(deps: CommandDeps, options: PassRouteOptions): Router<HttpState> {
  const router = serviceRouter('/api/v1/org');
  const authenticate = apiKeyAuth({ db: deps.db, trustProxy: options.trustProxy, changes: deps.readModelChanges });

  // Neither write takes a query parameter: one sent is refused as unknown, as by the reads.
  const noQuery = validateQuery(NO_QUERY_PARAMETERS);

  router.post('/passes', authenticate, requireScope('org:passes:write'), noQuery, jsonBody(), createPassesRoute(deps, apiKeyPrincipal, options));

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
