// The shareable pass page of a batch, `/p/{token}`, open to whoever holds the link (no sign-in):
//
//   GET  /p/:token               the page: visit details, one QR code per pass, the confirm form
//   GET  /p/:token/calendar.ics  the visit as an iCalendar download
//   POST /p/:token/register      the guest confirms the visit (form, CSRF token), then 303 back
//
// Each route is limited per source address (the token space must not be walkable) and answers
// its errors as HTML pages with the same headers as the page. The CSRF token is the sign-in
// pages' own (sign-in-kit.ts: a cookie secret and an HMAC of it in the form).
import type Router from '@koa/router';
import { serviceRouter } from '../../shared/http/service-app.js';
import type { HttpContext, HttpMiddleware, HttpState } from '../../shared/http/http-state.js';
import { ORG_API_RATE_LIMIT, RateLimiter, type RateLimitPolicy } from '../../shared/http/rate-limit.js';
import { ConflictError, DomainError, NotFoundError, RateLimitedError } from '../../shared/errors.js';
import type { CommandContext } from '../../shared/event-store/command-handler.js';
import type { CommandAppDeps } from '../command-app-deps.js';
import { createSignInKit } from '../sign-in/sign-in-kit.js';
import { field, readFormFields, type FormFields } from '../sign-in/page-form.js';
import { isPassLinkToken, loadPassBatch, type PassBatch } from './load-pass-batch.js';
import { passCard, passCardKind, parseRegistration, registrationState, type PassPageModel, type RegistrationForm } from './pass-page-model.js';
import { passMessagePage, passPage, passPagePaths } from './pass-page-view.js';
import { passCalendar } from './pass-calendar.js';
import { drawQrSvg, QrSvgCache } from './qr-svg.js';
import { registerGuest } from './register-guest.js';
import { seeOther, sendCalendar, sendPassPage } from './pass-page-response.js';
import { countRateLimited } from '../../shared/metrics/http-metrics.js';
import { OUTAGE_RETRY_AFTER_SECONDS, outageOf, recordOutage } from '../../shared/outage/part-unavailable.js';

/**
 * 60 requests a minute per source address for the three routes together (a guest opens the page
 * a handful of times). Escalates on ignored 429s: the page has no authenticated caller (the link
 * is the credential, 192 random bits, and a wrong one is just a 404), and a guest who reloads a
 * 429 page does not send a further minute's worth of requests while refused; a scraper does.
 */
export const PASS_PAGE_RATE_LIMIT: RateLimitPolicy = Object.freeze({ ...ORG_API_RATE_LIMIT, points: 60, windowSeconds: 60, abuseThreshold: 60 });

export interface PassPageOptions {
  readonly trustProxy: boolean;
  /** Overrides of PASS_PAGE_RATE_LIMIT (tests lower it, the benchmark raises it). */
  readonly rateLimit?: Partial<RateLimitPolicy>;
  /** Where drawn QR codes are kept (default: a cache of this router's own); null draws every code per request. */
  readonly qrCache?: QrSvgCache | null;
}

const ACTOR = { kind: 'system', name: 'pass-page' } as const;

function messageFor(error: DomainError): { title: string; message: string } {
  switch (error.status) {
    case 404:
      return {
        title: 'Pass not found',
        message: 'This link does not lead to a guest pass. Check that you opened the whole link, or ask the person who invited you for a new one.',
      };
    case 403:
      return { title: 'Form expired', message: 'The form has expired or did not come from this page. Open your pass page again and send it once more.' };
    case 409:
      return { title: 'Visit cannot be confirmed', message: 'The passes of this invitation have been revoked or have expired, so the visit can no longer be confirmed.' };
    default:
      return { title: 'Request not understood', message: error.message };
  }
}

/** Renders this router's errors as pages (the service's error middleware answers JSON). */
function passPageErrors(): HttpMiddleware {
  return async function renderPassPageErrors(ctx, next) {
    try {
      await next();
    } catch (error) {
      const token = ctx.params?.token as string | undefined;
      const back = isPassLinkToken(token) ? { href: passPagePaths(token).page, text: 'Back to your pass' } : undefined;
      if (error instanceof RateLimitedError) {
        countRateLimited(error.policy);
        const retryAfter = Math.max(1, Math.ceil(error.retryAfterSeconds));
        ctx.set('Retry-After', String(retryAfter));
        const wait = retryAfter < 120 ? `${retryAfter} seconds` : `${Math.ceil(retryAfter / 60)} minutes`;
        return sendPassPage(ctx, passMessagePage({ title: 'Too many requests', message: `Too many requests came from your network. Wait ${wait}, then try again.` }), 429);
      }
      if (error instanceof DomainError && error.status >= 400 && error.status < 500) {
        const { title, message } = messageFor(error);
        return sendPassPage(ctx, passMessagePage({ title, message, link: error.status === 404 ? undefined : back }), error.status);
      }
      const status = (error as { status?: unknown; expose?: unknown }).expose === true ? Number((error as { status: number }).status) : 500;
      if (status >= 400 && status < 500) {
        return sendPassPage(ctx, passMessagePage({ title: 'Request not understood', message: (error as Error).message, link: back }), status);
      }
      const outage = outageOf(error);
      if (outage !== null) {
        recordOutage(outage, ctx.state.log);
        ctx.set('Retry-After', String(OUTAGE_RETRY_AFTER_SECONDS));
        return sendPassPage(ctx, passMessagePage({ title: 'Temporarily unavailable', message: 'The pass cannot be shown just now. Wait a few seconds, then try again.', link: back }), 503);
      }
      ctx.state.log.error({ err: error }, 'unhandled error');
      sendPassPage(ctx, passMessagePage({ title: 'Something went wrong', message: 'The pass could not be shown just now. Try again in a moment.' }), 500);
    }
  };
}

export function passPageRoutes(deps: CommandAppDeps, options: PassPageOptions): Router<HttpState> {
  const router = serviceRouter();
  const kit = createSignInKit(deps);
  const limiter = new RateLimiter('pass-page', { ...PASS_PAGE_RATE_LIMIT, ...options.rateLimit }, deps.rateLimitStore);
  const guard = [passPageErrors(), limiter.middleware({ trustProxy: options.trustProxy })];
  const qrCache = options.qrCache === undefined ? new QrSvgCache() : options.qrCache;

  async function batchOf(ctx: HttpContext): Promise<PassBatch> {
    const batch = await loadPassBatch(deps, ctx.params.token);
    if (batch === null) throw new NotFoundError('pass not found');
    return batch;
  }

  async function render(ctx: HttpContext, batch: PassBatch, form: Omit<RegistrationForm, 'csrfToken'> | null, status = 200): Promise<void> {
    const token = ctx.params.token!;
    const now = new Date();
    const passes = await Promise.all(
      batch.passes.map(async (pass) => {
        if (passCardKind(pass, now) !== 'usable') {
          qrCache?.forget(pass.qrValue); // shown no more: its drawing goes too
          return passCard(pass, now, null);
        }
        const qr = qrCache !== null ? await qrCache.draw(pass.qrValue, pass.validUntil.getTime()) : await drawQrSvg(pass.qrValue);
        return passCard(pass, now, qr);
      }),
    );
    const state = registrationState(batch.passes, now);
    const registration: PassPageModel['registration'] =
      state === 'open'
        ? { state, form: { csrfToken: kit.csrfToken(ctx), ...(form ?? { nameOnId: '', vehicleNumber: '', errors: { nameOnId: null, vehicleNumber: null } }) } }
        : { state };
    const model: PassPageModel = {
      token,
      firstName: batch.guest.firstName,
      facilityName: batch.facilityName,
      timeZone: batch.timeZone,
      arrivalDate: batch.arrivalDate,
      arrivalTime: batch.arrivalTime,
      validFrom: batch.validFrom,
      validUntil: batch.validUntil,
      invitedBy: batch.guest.invitedBy,
      passes,
      registration,
    };
    sendPassPage(ctx, passPage(model), status);
  }

  router.get('/p/:token', ...guard, async (ctx) => {
    await render(ctx, await batchOf(ctx), null);
  });

  router.get('/p/:token/calendar.ics', ...guard, async (ctx) => {
    const batch = await batchOf(ctx);
    sendCalendar(
      ctx,
      passCalendar({
        batchId: batch.batchId,
        firstName: batch.guest.firstName,
        facilityName: batch.facilityName,
        timeZone: batch.timeZone,
        arrivalDate: batch.arrivalDate,
        arrivalTime: batch.arrivalTime,
        validFrom: batch.validFrom,
        validUntil: batch.validUntil,
        invitedBy: batch.guest.invitedBy,
        now: new Date(),
      }),
    );
  });

  router.post('/p/:token/register', ...guard, async (ctx) => {
    const fields: FormFields = await readFormFields(ctx);
    ctx.request.body = fields;
    kit.checkCsrf(ctx); // 403 without this browser's token
    const batch = await batchOf(ctx);
    const now = new Date();
    const typed = { nameOnId: field(fields, 'name_on_id'), vehicleNumber: field(fields, 'vehicle_number') };
    const parsed = parseRegistration(typed);
    if (!parsed.ok) {
      switch (registrationState(batch.passes, now)) {
        case 'open':
          return render(ctx, batch, { ...typed, errors: parsed.errors }, 400);
        case 'confirmed':
          return seeOther(ctx, passPagePaths(ctx.params.token!).page); // nothing left to confirm
        case 'closed':
          throw new ConflictError('the passes of this invitation are no longer active');
      }
    }
    const context: CommandContext = { correlationId: ctx.state.requestId, causationId: null, actor: ACTOR, now };
    await registerGuest(deps, batch, parsed.value, context);
    seeOther(ctx, passPagePaths(ctx.params.token!).page);
  });

  return router;
}
