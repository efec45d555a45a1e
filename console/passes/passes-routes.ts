// /passes (hosts: users with self_invite): create passes for a guest, list the host's own passes,
// open one, revoke one. The create is POST /api/v1/passes's: the same body parser
// (parseCreatePassRequest) and use case (createPasses), attributed to and counted against the
// signed-in user; the list is GET /api/v1/passes's query (listUserPasses, usageOf); the revoke is
// DELETE /api/v1/passes/{id}'s (revokePass with createdBy, so another host's pass is 404); the
// resend is resendPassMessage's (at most once per batch per 10 minutes, decided on the log).
import type Router from '@koa/router';
import type { HttpContext, HttpState } from '../../shared/http/http-state.js';
import { READ_MODELS, type FacilityRow, type PassBatchRow } from '../../shared/db/read-models.js';
import { DomainError, NotFoundError, QuotaExceededError, ValidationError } from '../../shared/errors.js';
import { isPassPublicId, parseCreatePassRequest } from '../../shared/domain/pass-request.js';
import type { GuestDetails, PassCreated } from '../../shared/domain/events.js';
import { open } from '../../shared/crypto/sealed-box.js';
import { createPasses } from '../../command-service/passes/create-passes.js';
import { revokePass } from '../../command-service/passes/revoke-pass.js';
import { resendPassMessage } from '../../command-service/passes/resend-pass-message.js';
import { ResendTooSoonError } from '../../shared/domain/pass-delivery-decider.js';
import { userCommandContext } from '../../command-service/sign-in/sign-in-kit.js';
import { redirectTo } from '../../command-service/sign-in/page-response.js';
import { listUserPasses, usageOf } from '../../query-service/user/list-user-passes.js';
import { nextPageCursor } from '../../query-service/passes/pass-page-query.js';
import { PASS_COLUMNS, passesWithDetails, type PassRow } from '../../query-service/passes/pass-item.js';
import type { ConsoleEnv } from '../console-env.js';
import { capitalise, guard, postedForm, sendConfirmPage, sendConsolePage } from '../console-guard.js';
import { refusalMessage, text } from '../console-form.js';
import { CONSOLE_PATHS } from '../console-paths.js';
import { consoleUser, type ConsoleUser } from '../console-user.js';
import { NO_ERRORS, type FormErrors } from '../pages/form-fields.js';
import { EMPTY_PASS_FORM, passCreatedPage, passDetailPage, passesPage, passFormPage, quotaMessage, type PassForm, type PassListEntry } from './passes-pages.js';

const PAGE_SIZE = 30;

/** The form's fields as the create's messages name them, with the words a person reads instead. */
const FIELD_WORDS: ReadonlyArray<readonly [string, string]> = [
  ['first_name', 'the first name'],
  ['last_name', 'the last name'],
  ['email', 'the email address'],
  ['phone', 'the mobile number'],
  ['facility_id', 'the facility'],
  ['arrival_date', 'the arrival date'],
  ['arrival_time', 'the arrival time'],
  ['quantity', 'the number of passes'],
  ['notes', 'the notes'],
];

export function guestName(first: string | null, last: string | null): string {
  const name = [first, last].filter((p) => p !== null && p !== '').join(' ');
  return name === '' ? 'Guest (details erased)' : name;
}

function arrivalOf(row: { arrival_date: string; arrival_time: string | null }): string {
  return row.arrival_time === null ? row.arrival_date : `${row.arrival_date} ${row.arrival_time}`;
}

function listEntry(row: PassRow & { public_id: string }): PassListEntry {
  const known = row.batch_row !== null;
  return {
    publicId: row.public_id,
    guestName: guestName(row.first_name, row.last_name),
    facilityName: row.facility_name,
    arrival: arrivalOf(row),
    status: row.status,
    createdAt: row.created_at,
    email: known ? row.email_delivery : undefined,
    sms: known ? row.sms_delivery : undefined,
  };
}

/** The create's JSON body, from the form: blank optional fields left out, numbers as numbers. */
function requestBody(form: PassForm): Record<string, unknown> {
  const body: Record<string, unknown> = { first_name: form.firstName, arrival_date: form.arrivalDate };
  if (form.lastName.trim() !== '') body.last_name = form.lastName;
  if (form.email.trim() !== '') body.email = form.email.trim();
  if (form.phone.trim() !== '') body.phone = form.phone.trim();
  if (form.arrivalTime.trim() !== '') body.arrival_time = form.arrivalTime.trim();
  if (form.notes.trim() !== '') body.notes = form.notes;
  body.facility_id = /^\d{1,15}$/.test(form.facilityId) ? Number(form.facilityId) : form.facilityId;
  body.quantity = /^\d{1,3}$/.test(form.quantity.trim()) ? Number(form.quantity.trim()) : form.quantity;
  return body;
}

/** A refused create as errors on the form's fields, each message in words (the 402 explained). */
function errorsOf(error: DomainError): FormErrors {
  if (error instanceof QuotaExceededError) return { quantity: quotaMessage(error.limit, error.current, error.requested) };
  if (error.status === 404 || error.status === 409) return { facility_id: refusalMessage(error) };
  const messages = error instanceof ValidationError && error.details.length > 0 ? error.details : [error.message];
  const errors: Record<string, string> = {};
  for (const message of messages) {
    const named = /email or phone/.test(message) ? 'email' : (FIELD_WORDS.find(([name]) => message.includes(name))?.[0] ?? 'first_name');
    let words = message.replace('one of email or phone', 'an email address or a mobile number');
    for (const [name, said] of FIELD_WORDS) words = words.split(name).join(said);
    errors[named] ??= capitalise(words.replace(/^the /, ''));
  }
  return errors;
}

export function passesSection(router: Router<HttpState>, env: ConsoleEnv): void {
  const { deps, kit } = env;
  const host = guard(env, 'self_invite');
  const { cursor } = env;

  async function activeFacilities(orgId: number): Promise<Array<{ value: string; label: string }>> {
    const rows = await deps
      .db<FacilityRow>(READ_MODELS.facilities)
      .where({ org_id: orgId, is_active: true, suspended: false })
      .orderBy('name')
      .select('facility_id', 'name');
    return rows.map((r) => ({ value: String(r.facility_id), label: r.name }));
  }

  async function showForm(ctx: HttpContext, user: ConsoleUser, form: PassForm, errors: FormErrors): Promise<void> {
    const [usage, facilities] = await Promise.all([usageOf(deps.db, user.userId, new Date()), activeFacilities(user.orgId)]);
    const choices = [{ value: '', label: 'Choose a facility' }, ...facilities];
    sendConsolePage(ctx, passFormPage({ user, csrfToken: kit.csrfToken(ctx), usage, facilities: facilities.length === 0 ? [] : choices, form, errors }), errors === NO_ERRORS ? 200 : 400);
  }

  router.get(CONSOLE_PATHS.passes, ...host, async (ctx) => {
    const user = consoleUser(ctx);
    const binding = { list: `console-passes:${user.orgId}:${user.userId}`, search: null };
    const raw = typeof ctx.query.after === 'string' ? ctx.query.after : null;
    const after = raw === null ? null : cursor.decode(raw, binding);
    const [{ rows, hasMore }, usage] = await Promise.all([
      listUserPasses(deps.db, { orgId: user.orgId, userId: user.userId }, { limit: PAGE_SIZE, after, search: null }),
      usageOf(deps.db, user.userId, new Date()),
    ]);
    const next = nextPageCursor(cursor, { rows, hasMore }, binding);
    const notice = ctx.query.notice === 'revoked' ? 'The pass was revoked: its QR code no longer opens any door.' : null;
    sendConsolePage(
      ctx,
      passesPage({
        user,
        csrfToken: kit.csrfToken(ctx),
        usage,
        passes: rows.map(listEntry),
        nextHref: next === null ? null : `${CONSOLE_PATHS.passes}?after=${encodeURIComponent(next)}`,
        notice,
      }),
    );
  });

  router.get(`${CONSOLE_PATHS.passes}/new`, ...host, async (ctx) => {
    await showForm(ctx, consoleUser(ctx), EMPTY_PASS_FORM, NO_ERRORS);
  });

  router.post(`${CONSOLE_PATHS.passes}/new`, ...host, async (ctx) => {
    const user = consoleUser(ctx);
    const fields = postedForm(ctx);
    const form: PassForm = {
      firstName: text(fields, 'first_name'),
      lastName: text(fields, 'last_name'),
      email: text(fields, 'email'),
      phone: text(fields, 'phone'),
      facilityId: text(fields, 'facility_id'),
      arrivalDate: text(fields, 'arrival_date'),
      arrivalTime: text(fields, 'arrival_time'),
      quantity: text(fields, 'quantity'),
      notes: text(fields, 'notes'),
    };
    const now = new Date();
    try {
      const request = parseCreatePassRequest(requestBody(form));
      const { passes, passLinkToken } = await createPasses(deps, { orgId: user.orgId, userId: user.userId, request }, userCommandContext(ctx, user.userId, now));
      const usage = await usageOf(deps.db, user.userId, new Date());
      sendConsolePage(
        ctx,
        passCreatedPage({ user, csrfToken: kit.csrfToken(ctx), usage, quantity: passes.length, passLink: `${deps.oauth.issuer}/p/${passLinkToken}`, firstPublicId: passes[0]!.publicId }),
        201,
      );
    } catch (error) {
      if (!(error instanceof DomainError) || error.status >= 500 || error.status === 429 || error.status === 403) throw error;
      await showForm(ctx, user, form, errorsOf(error));
    }
  });

  async function ownPass(ctx: HttpContext): Promise<PassRow & { public_id: string; batch_id: string }> {
    const user = consoleUser(ctx);
    const publicId = ctx.params.publicId ?? '';
    if (!isPassPublicId(publicId)) throw new NotFoundError('pass not found');
    const row = (await passesWithDetails(deps.db)
      .where({ 'p.public_id': publicId, 'p.org_id': user.orgId, 'p.created_by': user.userId })
      .first(...PASS_COLUMNS, 'p.batch_id')) as (PassRow & { public_id: string; batch_id: string }) | undefined;
    if (row === undefined) throw new NotFoundError('pass not found');
    return row;
  }

  /** The batch's pass page link, from its first PassCreated (the token is kept only sealed); null once erased. */
  async function passLinkOf(batchId: string): Promise<{ link: string | null; size: number }> {
    const batch = await deps.db<PassBatchRow>(READ_MODELS.passBatches).where({ batch_id: batchId }).first('stream_name', 'stream_revision', 'batch_size');
    if (batch === undefined) return { link: null, size: 1 };
    const [event] = await deps.store.readStream(batch.stream_name, { fromRevision: Number(batch.stream_revision), maxCount: 1 });
    if (event?.type !== 'PassCreated') return { link: null, size: batch.batch_size };
    const sealed = (event.data as PassCreated['data']).guest;
    const key = (await deps.subjectKeys.getMany([sealed.keyId])).get(sealed.keyId);
    if (key === undefined) return { link: null, size: batch.batch_size };
    return { link: `${deps.oauth.issuer}/p/${open<GuestDetails>(key, sealed).passLinkToken}`, size: batch.batch_size };
  }

  async function showPass(ctx: HttpContext, row: PassRow & { public_id: string; batch_id: string }, notice: string | null, refusal: string | null): Promise<void> {
    const { link, size } = await passLinkOf(row.batch_id);
    const page = passDetailPage({ user: consoleUser(ctx), csrfToken: kit.csrfToken(ctx), pass: { ...listEntry(row), passLink: link, batchSize: size }, notice, refusal });
    sendConsolePage(ctx, page, refusal === null ? 200 : 409);
  }

  router.get(`${CONSOLE_PATHS.passes}/:publicId`, ...host, async (ctx) => {
    const row = await ownPass(ctx);
    const notice = ctx.query.notice === 'resent' ? 'The guest’s message is being sent again, with the same link.' : null;
    await showPass(ctx, row, notice, null);
  });

  router.post(`${CONSOLE_PATHS.passes}/:publicId/resend`, ...host, async (ctx) => {
    const user = consoleUser(ctx);
    const row = await ownPass(ctx);
    try {
      await resendPassMessage(deps, { orgId: user.orgId, batchId: row.batch_id, requestedBy: user.userId }, userCommandContext(ctx, user.userId, new Date()));
    } catch (error) {
      if (error instanceof ResendTooSoonError) {
        // In UTC, as the rest of the host's pages: the earliest whole minute it will be allowed.
        const at = new Date(Math.ceil(error.retryAt.getTime() / 60_000) * 60_000).toISOString().slice(11, 16);
        return showPass(ctx, row, null, `The message was sent again less than 10 minutes ago. You can resend at ${at} UTC.`);
      }
      if (error instanceof DomainError && error.status === 409) return showPass(ctx, row, null, `${refusalMessage(error)}: nothing was sent.`);
      throw error;
    }
    redirectTo(ctx, `${CONSOLE_PATHS.passes}/${row.public_id}?notice=resent`);
  });

  router.get(`${CONSOLE_PATHS.passes}/:publicId/revoke`, ...host, async (ctx) => {
    const row = await ownPass(ctx);
    sendConfirmPage(env, ctx, {
      current: CONSOLE_PATHS.passes,
      title: `Revoke the pass for ${guestName(row.first_name, row.last_name)}?`,
      consequence: 'Its QR code stops opening doors at once. This cannot be undone.',
      buttonText: 'Revoke',
      backHref: `${CONSOLE_PATHS.passes}/${row.public_id}`,
    });
  });

  router.post(`${CONSOLE_PATHS.passes}/:publicId/revoke`, ...host, async (ctx) => {
    const user = consoleUser(ctx);
    const row = await ownPass(ctx);
    if (text(postedForm(ctx), 'confirm') !== 'yes') return redirectTo(ctx, `${CONSOLE_PATHS.passes}/${row.public_id}/revoke`);
    await revokePass(deps, { orgId: user.orgId, publicId: row.public_id, createdBy: user.userId }, userCommandContext(ctx, user.userId, new Date()));
    redirectTo(ctx, `${CONSOLE_PATHS.passes}?notice=revoked`);
  });
}
