// /settings/members (admins): the member directory with the API's query (memberPageQuery) at the
// contact tier, and the CLI's use cases: add, edit, deactivate, reactivate, erase (a sign-in in
// the last 10 minutes and a confirmation first) and the CSV import (importMembers), uploaded as a
// plain form (multipart, no script needed) and run in the background while its progress page
// updates itself. Every use case is given the organization, so another's member is 404.
import type Router from '@koa/router';
import type { HttpContext, HttpState } from '../../shared/http/http-state.js';
import { DomainError, NotFoundError, PayloadTooLargeError, ValidationError } from '../../shared/errors.js';
import { addMember } from '../../command-service/members/add-member.js';
import { updateMember } from '../../command-service/members/update-member.js';
import { deactivateMember, reactivateMember } from '../../command-service/members/change-member-status.js';
import { eraseMember } from '../../command-service/members/erase-member.js';
import { userCommandContext } from '../../command-service/sign-in/sign-in-kit.js';
import { redirectTo } from '../../command-service/sign-in/page-response.js';
import { memberPageQuery, memberSearch, memberTotal, MEMBER_STATUSES, type MemberStatusFilter } from '../../query-service/members/list-members.js';
import { memberColumns, memberDirectory, openContacts, type MemberItemRow } from '../../query-service/members/member-item.js';
import { MEMBER_FIELDS } from '../../query-service/members/member-fields.js';
import { normaliseSearch } from '../../query-service/org-passes/list-org-passes.js';
import { pageOf } from '../../query-service/passes/pass-page-query.js';
import type { ConsoleEnv } from '../console-env.js';
import { checkUploadCsrf, guard, postedForm, requireRecentSignIn, sendConsolePage } from '../console-guard.js';
import { fieldOfRefusal, refusalMessage, text } from '../console-form.js';
import { CONSOLE_PATHS } from '../console-paths.js';
import { consoleUser } from '../console-user.js';
import { NO_ERRORS, type FormErrors } from '../pages/form-fields.js';
import { MemberImportJobs } from './member-import-jobs.js';
import {
  EMPTY_MEMBER_FORM,
  eraseMemberPage,
  importFormPage,
  importProgressPage,
  memberFormPage,
  memberPage,
  membersPage,
  type MemberForm,
  type MemberView,
} from './members-pages.js';
import { linesOf, multipartBoundary, parseMultipart } from './multipart-form.js';

const PAGE_SIZE = 30;
/** 200,000 rows of a generous 300 bytes each, and the form around them. */
export const IMPORT_LIMIT_BYTES = 64 * 1024 * 1024;
const MEMBER_ID = /^emp_[0-9a-f]{32}$/;

const REFUSAL_FIELDS = [
  [/first/i, 'first_name'],
  [/last/i, 'last_name'],
  [/email/i, 'email'],
  [/phone/i, 'phone'],
  [/job/i, 'job_title'],
  [/department/i, 'department'],
] as const;

const NOTICES: Readonly<Record<string, string>> = {
  added: 'The member was added.',
  saved: 'The changes were saved.',
  deactivated: 'The member was deactivated: they no longer appear among active members.',
  reactivated: 'The member was reactivated.',
  erased: 'The member’s personal data was erased.',
};

function viewOf(row: MemberItemRow, contact: { email: string | null; phone: string | null } | undefined): MemberView {
  return {
    id: row.member_id,
    name: row.name,
    firstName: row.first_name,
    lastName: row.last_name,
    jobTitle: row.job_title,
    department: row.department,
    email: contact?.email ?? null,
    phone: contact?.phone ?? null,
    status: row.status,
    createdAt: row.created_at === null ? null : new Date(row.created_at).toISOString(),
  };
}

function noticeOf(ctx: HttpContext): string | null {
  const key = ctx.query.notice;
  return typeof key === 'string' ? (NOTICES[key] ?? null) : null;
}

/** The request body, refused (413) past IMPORT_LIMIT_BYTES before more is read. */
async function readUpload(ctx: HttpContext): Promise<Buffer> {
  const tooLarge = () => new PayloadTooLargeError('the file is larger than 64 MB');
  if (Number(ctx.get('content-length') || 0) > IMPORT_LIMIT_BYTES) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > IMPORT_LIMIT_BYTES) throw tooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

export function membersSection(router: Router<HttpState>, env: ConsoleEnv): void {
  const { deps, kit } = env;
  const admin = guard(env, 'admin');
  const { cursor } = env;
  const imports = new MemberImportJobs(deps);
  const allFields = [...MEMBER_FIELDS];

  async function memberOf(ctx: HttpContext): Promise<MemberView> {
    const user = consoleUser(ctx);
    const id = ctx.params.memberId ?? '';
    if (!MEMBER_ID.test(id)) throw new NotFoundError('member not found');
    const row = (await memberDirectory(deps.db).where({ member_id: id, org_id: user.orgId }).first(memberColumns(deps.db, allFields))) as MemberItemRow | undefined;
    if (row === undefined) throw new NotFoundError('member not found');
    const contacts = await openContacts([row], deps.subjectKeys);
    return viewOf(row, contacts.get(row.member_id));
  }

  function formOf(ctx: HttpContext): MemberForm {
    const f = postedForm(ctx);
    return {
      firstName: text(f, 'first_name'),
      lastName: text(f, 'last_name'),
      email: text(f, 'email'),
      phone: text(f, 'phone'),
      jobTitle: text(f, 'job_title'),
      department: text(f, 'department'),
    };
  }

  const profileOf = (form: MemberForm) => ({
    firstName: form.firstName,
    lastName: form.lastName,
    email: form.email.trim() === '' ? null : form.email,
    phone: form.phone.trim() === '' ? null : form.phone,
    jobTitle: form.jobTitle.trim() === '' ? null : form.jobTitle,
    department: form.department.trim() === '' ? null : form.department,
  });

  const refused = (error: unknown): FormErrors => {
    if (!(error instanceof DomainError) || error.status >= 500 || error.status === 404 || error.status === 429) throw error;
    return { [fieldOfRefusal(error, REFUSAL_FIELDS, 'first_name')]: refusalMessage(error) };
  };

  router.get(CONSOLE_PATHS.members, ...admin, async (ctx) => {
    const user = consoleUser(ctx);
    const status: MemberStatusFilter = (MEMBER_STATUSES as readonly string[]).includes(String(ctx.query.status)) ? (ctx.query.status as MemberStatusFilter) : 'active';
    const rawSearch = typeof ctx.query.search === 'string' ? ctx.query.search.slice(0, 100) : '';
    const term = normaliseSearch(rawSearch);
    const binding = { list: `console-members:${user.orgId}:${status}`, search: term };
    const after = typeof ctx.query.after === 'string' ? cursor.decodeTextId(ctx.query.after, binding) : null;
    // The admin's tier is the contact tier: a whole email or phone finds its member too.
    const search = term === null ? null : deps.contactHasher ? memberSearch(term, 'contact', deps.contactHasher) : { term, emailHash: null, phoneHash: null };
    const found = (await memberPageQuery(deps.db, { orgId: user.orgId, status, limit: PAGE_SIZE, after, search, fields: allFields })) as Array<MemberItemRow & { member_total?: string | number | null }>;
    let total: number | null = null;
    if (term === null) total = found[0] ? Number(found[0].member_total ?? 0) : await memberTotal(deps.db, user.orgId, status);
    const { rows, hasMore } = pageOf(found, PAGE_SIZE);
    const contacts = await openContacts(rows, deps.subjectKeys);
    const last = rows.at(-1);
    const next = hasMore && last ? cursor.encode({ createdAt: last.cursor_at, id: last.member_id }, binding) : null;
    const query = new URLSearchParams({ ...(rawSearch !== '' ? { search: rawSearch } : {}), status, ...(next !== null ? { after: next } : {}) });
    sendConsolePage(
      ctx,
      membersPage({
        user,
        csrfToken: kit.csrfToken(ctx),
        members: rows.map((r) => viewOf(r, contacts.get(r.member_id))),
        search: rawSearch,
        status,
        total,
        nextHref: next === null ? null : `${CONSOLE_PATHS.members}?${query.toString()}`,
        notice: noticeOf(ctx),
      }),
    );
  });

  router.get(`${CONSOLE_PATHS.members}/new`, ...admin, (ctx) => {
    sendConsolePage(ctx, memberFormPage({ user: consoleUser(ctx), csrfToken: kit.csrfToken(ctx), form: EMPTY_MEMBER_FORM, errors: NO_ERRORS, action: ctx.path, editing: false, backHref: CONSOLE_PATHS.members }));
  });

  router.post(`${CONSOLE_PATHS.members}/new`, ...admin, async (ctx) => {
    const user = consoleUser(ctx);
    const form = formOf(ctx);
    try {
      const { memberId } = await addMember(deps, { orgId: user.orgId, ...profileOf(form) }, userCommandContext(ctx, user.userId, new Date()));
      redirectTo(ctx, `${CONSOLE_PATHS.members}/${memberId}?notice=added`);
    } catch (error) {
      sendConsolePage(ctx, memberFormPage({ user, csrfToken: kit.csrfToken(ctx), form, errors: refused(error), action: ctx.path, editing: false, backHref: CONSOLE_PATHS.members }), 400);
    }
  });

  router.get(`${CONSOLE_PATHS.members}/import`, ...admin, (ctx) => {
    sendConsolePage(ctx, importFormPage({ user: consoleUser(ctx), csrfToken: kit.csrfToken(ctx), errors: NO_ERRORS }));
  });

  router.post(`${CONSOLE_PATHS.members}/import`, ...guard(env, 'admin', { ownBody: true }), async (ctx) => {
    const user = consoleUser(ctx);
    const boundary = multipartBoundary(ctx.get('content-type') || undefined);
    if (boundary === null) throw new ValidationError('the file must be sent from the import form');
    const body = await readUpload(ctx);
    const parts = parseMultipart(body, boundary);
    const csrf = parts.find((p) => p.name === 'csrf' && p.filename === null);
    checkUploadCsrf(env, ctx, { csrf: csrf?.data.toString('utf8') ?? '' });
    const file = parts.find((p) => p.name === 'file' && p.filename !== null);
    if (file === undefined || file.data.length === 0) {
      return sendConsolePage(ctx, importFormPage({ user, csrfToken: kit.csrfToken(ctx), errors: { file: 'Choose a CSV file to import' } }), 400);
    }
    const job = imports.start({ orgId: user.orgId, fileName: file.filename || 'members.csv', lines: linesOf(file.data) }, userCommandContext(ctx, user.userId, new Date()));
    redirectTo(ctx, `${CONSOLE_PATHS.members}/import/${job.id}`);
  });

  router.get(`${CONSOLE_PATHS.members}/import/:jobId`, ...admin, (ctx) => {
    const user = consoleUser(ctx);
    const job = imports.get(ctx.params.jobId ?? '', user.orgId);
    if (job === null) throw new NotFoundError('import not found');
    sendConsolePage(ctx, importProgressPage({ user, csrfToken: kit.csrfToken(ctx), job }));
  });

  router.get(`${CONSOLE_PATHS.members}/:memberId`, ...admin, async (ctx) => {
    sendConsolePage(ctx, memberPage({ user: consoleUser(ctx), csrfToken: kit.csrfToken(ctx), member: await memberOf(ctx), notice: noticeOf(ctx) }));
  });

  router.get(`${CONSOLE_PATHS.members}/:memberId/edit`, ...admin, async (ctx) => {
    const m = await memberOf(ctx);
    const form: MemberForm = { firstName: m.firstName, lastName: m.lastName, email: m.email ?? '', phone: m.phone ?? '', jobTitle: m.jobTitle ?? '', department: m.department ?? '' };
    sendConsolePage(ctx, memberFormPage({ user: consoleUser(ctx), csrfToken: kit.csrfToken(ctx), form, errors: NO_ERRORS, action: ctx.path, editing: true, backHref: `${CONSOLE_PATHS.members}/${m.id}` }));
  });

  router.post(`${CONSOLE_PATHS.members}/:memberId/edit`, ...admin, async (ctx) => {
    const user = consoleUser(ctx);
    const m = await memberOf(ctx);
    const form = formOf(ctx);
    try {
      await updateMember(deps, m.id, profileOf(form), userCommandContext(ctx, user.userId, new Date()), { orgId: user.orgId });
      redirectTo(ctx, `${CONSOLE_PATHS.members}/${m.id}?notice=saved`);
    } catch (error) {
      sendConsolePage(ctx, memberFormPage({ user, csrfToken: kit.csrfToken(ctx), form, errors: refused(error), action: ctx.path, editing: true, backHref: `${CONSOLE_PATHS.members}/${m.id}` }), 400);
    }
  });

  for (const [action, change] of [
    ['deactivate', deactivateMember],
    ['reactivate', reactivateMember],
  ] as const) {
    router.post(`${CONSOLE_PATHS.members}/:memberId/${action}`, ...admin, async (ctx) => {
      const user = consoleUser(ctx);
      const m = await memberOf(ctx);
      await change(deps, { memberId: m.id, orgId: user.orgId }, userCommandContext(ctx, user.userId, new Date()));
      redirectTo(ctx, `${CONSOLE_PATHS.members}/${m.id}?notice=${action}d`);
    });
  }

  router.get(`${CONSOLE_PATHS.members}/:memberId/erase`, ...admin, async (ctx) => {
    const m = await memberOf(ctx);
    if (!requireRecentSignIn(env, ctx, 'erase a member', ctx.path)) return;
    sendConsolePage(ctx, eraseMemberPage({ user: consoleUser(ctx), csrfToken: kit.csrfToken(ctx), member: m, errors: NO_ERRORS }));
  });

  router.post(`${CONSOLE_PATHS.members}/:memberId/erase`, ...admin, async (ctx) => {
    const user = consoleUser(ctx);
    const m = await memberOf(ctx);
    if (!requireRecentSignIn(env, ctx, 'erase a member', ctx.path)) return;
    const what = text(postedForm(ctx), 'what');
    if (text(postedForm(ctx), 'confirm') !== 'yes' || (what !== 'contact' && what !== 'all')) {
      return sendConsolePage(ctx, eraseMemberPage({ user, csrfToken: kit.csrfToken(ctx), member: m, errors: { what: 'Choose what to erase' } }), 400);
    }
    await eraseMember(deps, m.id, { orgId: user.orgId, includeName: what === 'all' }, userCommandContext(ctx, user.userId, new Date()));
    redirectTo(ctx, `${CONSOLE_PATHS.members}/${m.id}?notice=erased`);
  });
}
