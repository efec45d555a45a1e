// /settings/people (admins): who can sign in, their roles and invite allowances (user-decider and
// organization-decider commands, through change-user-access.ts), invitations by email (the use
// case of `invite create`, then the invitation email) and their cancelling. Granting the admin
// role needs a sign-in within the last 10 minutes.
import type Router from '@koa/router';
import type { HttpContext, HttpState } from '../../shared/http/http-state.js';
import { READ_MODELS, type InvitationRow, type UserRow } from '../../shared/db/read-models.js';
import { monthOf, type Role } from '../../shared/domain/events.js';
import { DomainError, NotFoundError } from '../../shared/errors.js';
import { changeOrganizationInviteAllowance, changeUserInviteAllowance, setUserRoles } from '../../command-service/users/change-user-access.js';
import { cancelInvitation } from '../../command-service/invitations/answer-invitation.js';
import { createInvitation } from '../../command-service/invitations/create-invitation.js';
import { userCommandContext } from '../../command-service/sign-in/sign-in-kit.js';
import { redirectTo } from '../../command-service/sign-in/page-response.js';
import type { ConsoleEnv } from '../console-env.js';
import { guard, idParam, postedForm, requireRecentSignIn, sendConfirmPage, sendConsolePage } from '../console-guard.js';
import { fieldOfRefusal, refusalMessage, text, values } from '../console-form.js';
import { CONSOLE_PATHS } from '../console-paths.js';
import { consoleUser } from '../console-user.js';
import { NO_ERRORS, type FormErrors } from '../pages/form-fields.js';
import { peoplePage, personPage, type AccessForm, type InviteForm, type PendingInvitation, type PersonItem } from './people-pages.js';

const WHOLE = /^\d{1,7}$/;

export function peopleSection(router: Router<HttpState>, env: ConsoleEnv): void {
  const { deps, kit } = env;
  const admin = guard(env, 'admin');

  async function orgAllowance(orgId: number): Promise<number> {
    const row = await deps.db(READ_MODELS.organizations).first('invite_allowance').where({ org_id: orgId });
    return Number(row?.invite_allowance ?? 0);
  }

  async function people(orgId: number, userId?: number): Promise<PersonItem[]> {
    const month = monthOf(new Date());
    const query = deps
      .db({ u: READ_MODELS.users })
      .leftJoin({ a: READ_MODELS.inviteAllowanceUsage }, (join) => join.on('a.user_id', '=', 'u.user_id').andOnVal('a.month', '=', month))
      .where('u.org_id', orgId)
      .orderBy([{ column: 'u.last_name' }, { column: 'u.first_name' }, { column: 'u.user_id' }])
      .select('u.user_id', 'u.first_name', 'u.last_name', 'u.email', 'u.roles', 'u.invite_allowance', deps.db.raw('coalesce(a.used, 0) AS used'));
    if (userId !== undefined) query.where('u.user_id', userId);
    const rows = (await query) as Array<Pick<UserRow, 'user_id' | 'first_name' | 'last_name' | 'email' | 'roles' | 'invite_allowance'> & { used: number | string }>;
    return rows.map((r) => ({
      user_id: Number(r.user_id),
      name: `${r.first_name} ${r.last_name}`,
      email: r.email,
      roles: r.roles as Role[],
      invite_allowance: r.invite_allowance === null ? null : Number(r.invite_allowance),
      used: Number(r.used),
    }));
  }

  async function pending(orgId: number): Promise<PendingInvitation[]> {
    const rows = await deps
      .db<InvitationRow>(READ_MODELS.invitations)
      .where({ org_id: orgId, status: 'pending' })
      .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'invite_id', order: 'desc' }])
      .limit(500)
      .select('invite_id', 'email', 'role', 'created_at');
    return rows.map((r) => ({ invite_id: Number(r.invite_id), email: r.email, role: r.role as Role | null, created_at: r.created_at }));
  }

  async function renderPeople(ctx: HttpContext, extra: { invite?: InviteForm; allowanceValue?: string; errors?: FormErrors } = {}, status = 200): Promise<void> {
    const user = consoleUser(ctx);
    const [list, invitations, allowance] = await Promise.all([people(user.orgId), pending(user.orgId), orgAllowance(user.orgId)]);
    const notice = typeof ctx.query.notice === 'string' ? ctx.query.notice : null;
    sendConsolePage(
      ctx,
      peoplePage({
        user,
        csrfToken: kit.csrfToken(ctx),
        people: list,
        invitations,
        orgAllowance: allowance,
        notice: status === 200 ? notice : null,
        invite: extra.invite ?? { email: '', role: 'self_invite' },
        allowanceValue: extra.allowanceValue ?? String(allowance),
        errors: extra.errors ?? NO_ERRORS,
      }),
      status,
    );
  }

  async function personOf(ctx: HttpContext): Promise<PersonItem> {
    const [person] = await people(consoleUser(ctx).orgId, idParam(ctx.params.userId));
    if (person === undefined) throw new NotFoundError('user not found');
    return person;
  }

  router.get(CONSOLE_PATHS.people, ...admin, (ctx) => renderPeople(ctx));

  router.post(`${CONSOLE_PATHS.people}/invite`, ...admin, async (ctx) => {
    const user = consoleUser(ctx);
    const fields = postedForm(ctx);
    const invite: InviteForm = { email: text(fields, 'email').trim(), role: text(fields, 'role') };
    if (invite.email === '') return renderPeople(ctx, { invite, errors: { email: 'Enter the email address to invite' } }, 400);
    if (invite.role === 'admin' && !requireRecentSignIn(env, ctx, 'offer someone the admin role', CONSOLE_PATHS.people)) return;
    try {
      await createInvitation(deps, { orgId: user.orgId, email: invite.email, role: invite.role === '' ? null : invite.role }, userCommandContext(ctx, user.userId, new Date()));
      redirectTo(ctx, `${CONSOLE_PATHS.people}?notice=invited`);
    } catch (error) {
      if (!(error instanceof DomainError) || error.status >= 500) throw error;
      const field = fieldOfRefusal(error, [[/role/i, 'role']], 'email');
      await renderPeople(ctx, { invite, errors: { [field]: refusalMessage(error) } }, 400);
    }
  });

  router.post(`${CONSOLE_PATHS.people}/allowance`, ...admin, async (ctx) => {
    const user = consoleUser(ctx);
    const value = text(postedForm(ctx), 'invite_allowance').trim();
    if (!WHOLE.test(value)) return renderPeople(ctx, { allowanceValue: value, errors: { invite_allowance: 'Enter a whole number, such as 50' } }, 400);
    try {
      await changeOrganizationInviteAllowance(deps, { orgId: user.orgId, inviteAllowance: Number(value) }, userCommandContext(ctx, user.userId, new Date()));
      redirectTo(ctx, `${CONSOLE_PATHS.people}?notice=allowance`);
    } catch (error) {
      if (!(error instanceof DomainError) || error.status >= 500) throw error;
      await renderPeople(ctx, { allowanceValue: value, errors: { invite_allowance: refusalMessage(error) } }, 400);
    }
  });

  router.get(`${CONSOLE_PATHS.people}/invitations/:inviteId/cancel`, ...admin, async (ctx) => {
    const user = consoleUser(ctx);
    const inviteId = idParam(ctx.params.inviteId);
    const invitation = await deps.db<InvitationRow>(READ_MODELS.invitations).first('email').where({ invite_id: inviteId, org_id: user.orgId, status: 'pending' });
    if (invitation === undefined) throw new NotFoundError('invitation not found');
    sendConfirmPage(env, ctx, {
      current: CONSOLE_PATHS.people,
      title: `Cancel the invitation of ${invitation.email}?`,
      consequence: 'Its link stops working at once.',
      buttonText: 'Cancel invitation',
    });
  });

  router.post(`${CONSOLE_PATHS.people}/invitations/:inviteId/cancel`, ...admin, async (ctx) => {
    const user = consoleUser(ctx);
    await cancelInvitation(deps, { inviteId: idParam(ctx.params.inviteId), orgId: user.orgId }, userCommandContext(ctx, user.userId, new Date()));
    redirectTo(ctx, `${CONSOLE_PATHS.people}?notice=cancelled`);
  });

  router.get(`${CONSOLE_PATHS.people}/:userId`, ...admin, async (ctx) => {
    const person = await personOf(ctx);
    const form: AccessForm = { roles: person.roles, allowance: person.invite_allowance === null ? '' : String(person.invite_allowance) };
    sendConsolePage(ctx, personPage({ user: consoleUser(ctx), csrfToken: kit.csrfToken(ctx), person, orgAllowance: await orgAllowance(consoleUser(ctx).orgId), form, errors: NO_ERRORS }));
  });

  router.post(`${CONSOLE_PATHS.people}/:userId`, ...admin, async (ctx) => {
    const user = consoleUser(ctx);
    const person = await personOf(ctx);
    const fields = postedForm(ctx);
    const form: AccessForm = { roles: values(fields, 'roles'), allowance: text(fields, 'invite_allowance').trim() };
    const again = async (errors: FormErrors) =>
      sendConsolePage(ctx, personPage({ user, csrfToken: kit.csrfToken(ctx), person, orgAllowance: await orgAllowance(user.orgId), form, errors }), 400);
    if (form.allowance !== '' && !WHOLE.test(form.allowance)) return again({ invite_allowance: 'Enter a whole number, or leave it empty' });
    if (form.roles.includes('admin') && !person.roles.includes('admin') && !requireRecentSignIn(env, ctx, 'give someone the admin role', ctx.path)) return;
    const context = userCommandContext(ctx, user.userId, new Date());
    try {
      await setUserRoles(deps, { orgId: user.orgId, userId: person.user_id, roles: form.roles }, context);
      await changeUserInviteAllowance(deps, { orgId: user.orgId, userId: person.user_id, inviteAllowance: form.allowance === '' ? null : Number(form.allowance) }, context);
    } catch (error) {
      if (!(error instanceof DomainError) || error.status >= 500 || error.status === 404) throw error;
      return again({ [fieldOfRefusal(error, [[/role/i, 'roles']], 'invite_allowance')]: refusalMessage(error) });
    }
    redirectTo(ctx, `${CONSOLE_PATHS.people}?notice=saved`);
  });
}
