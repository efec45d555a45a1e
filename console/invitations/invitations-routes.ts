// /invitations (anyone signed in): the pending invitations addressed to the user (by user id or
// email, as GET /api/v1/invites matches them), Accept and Decline (answer-invitation.ts; both are
// events, and both take the invitation off the pending list). /invitations/join/{id}.{token}: the
// link of the invitation email (no sign-in): a person without an account in the organization sets
// a password (the use case of `user create`), or makes a passkey (join-passkey-routes.ts), and is
// signed in; one with an account signs in.
import type Router from '@koa/router';
import type { HttpState } from '../../shared/http/http-state.js';
import { READ_MODELS } from '../../shared/db/read-models.js';
import type { Role } from '../../shared/domain/events.js';
import { DomainError } from '../../shared/errors.js';
import { SIGN_IN_AMR } from '../../shared/sign-in/sign-in-methods.js';
import { acceptInvitation, declineInvitation } from '../../command-service/invitations/answer-invitation.js';
import { addUser } from '../../command-service/users/add-user.js';
import { userCommandContext } from '../../command-service/sign-in/sign-in-kit.js';
import { redirectTo } from '../../command-service/sign-in/page-response.js';
import type { ConsoleEnv } from '../console-env.js';
import { guard, idParam, postedForm, publicGuard, sendConsolePage } from '../console-guard.js';
import { fieldOfRefusal, refusalMessage, text } from '../console-form.js';
import { CONSOLE_PATHS } from '../console-paths.js';
import { consoleUser } from '../console-user.js';
import { invitationOfLink } from './invitation-link.js';
import { invitationsPage, joinNameErrors, setPasswordPage, signInToAnswerPage, type JoinForm, type MyInvitation } from './invitations-pages.js';

export function invitationsSection(router: Router<HttpState>, env: ConsoleEnv): void {
  const { deps, kit } = env;
  const anyone = guard(env, null);

  async function mine(userId: number): Promise<MyInvitation[]> {
    const email = deps.db(READ_MODELS.users).where({ user_id: userId }).select(deps.db.raw('lower(email)'));
    const rows = (await deps
      .db({ i: READ_MODELS.invitations })
      .leftJoin({ o: READ_MODELS.organizations }, 'o.org_id', 'i.org_id')
      .where('i.status', 'pending')
      .where((match) => match.where('i.user_id', userId).orWhere('i.email', email))
      .orderBy([{ column: 'i.created_at', order: 'desc' }, { column: 'i.invite_id', order: 'desc' }])
      .limit(100)
      .select('i.invite_id', 'i.org_id', 'o.name as organization', 'i.role', 'i.created_at')) as Array<{ invite_id: string; org_id: string; organization: string | null; role: Role | null; created_at: Date }>;
    return rows.map((r) => ({ invite_id: Number(r.invite_id), org_id: Number(r.org_id), organization: r.organization ?? 'An organization', role: r.role, created_at: r.created_at }));
  }

  router.get(CONSOLE_PATHS.invitations, ...anyone, async (ctx) => {
    const user = consoleUser(ctx);
    const notice = typeof ctx.query.notice === 'string' ? ctx.query.notice : null;
    sendConsolePage(ctx, invitationsPage({ user, csrfToken: kit.csrfToken(ctx), invitations: await mine(user.userId), notice }));
  });

  router.post(`${CONSOLE_PATHS.invitations}/:inviteId/accept`, ...anyone, async (ctx) => {
    const user = consoleUser(ctx);
    await acceptInvitation(deps, { inviteId: idParam(ctx.params.inviteId), userId: user.userId }, userCommandContext(ctx, user.userId, new Date()));
    redirectTo(ctx, `${CONSOLE_PATHS.invitations}?notice=accepted`);
  });

  router.post(`${CONSOLE_PATHS.invitations}/:inviteId/decline`, ...anyone, async (ctx) => {
    const user = consoleUser(ctx);
    await declineInvitation(deps, { inviteId: idParam(ctx.params.inviteId), userId: user.userId }, userCommandContext(ctx, user.userId, new Date()));
    redirectTo(ctx, `${CONSOLE_PATHS.invitations}?notice=declined`);
  });

  router.get(`${CONSOLE_PATHS.invitations}/join/:ref`, ...publicGuard(env), async (ctx) => {
    const invitation = await invitationOfLink(deps, ctx.params.ref);
    if (invitation.hasAccount) {
      kit.returnAfterSignIn(ctx, CONSOLE_PATHS.invitations);
      return sendConsolePage(ctx, signInToAnswerPage({ csrfToken: kit.csrfToken(ctx), email: invitation.email, organization: invitation.organization }));
    }
    sendConsolePage(ctx, setPasswordPage({ csrfToken: kit.csrfToken(ctx), action: ctx.path, email: invitation.email, organization: invitation.organization, form: { firstName: '', lastName: '' }, errors: {} }));
  });

  router.post(`${CONSOLE_PATHS.invitations}/join/:ref`, ...publicGuard(env), async (ctx) => {
    const invitation = await invitationOfLink(deps, ctx.params.ref);
    if (invitation.hasAccount) return redirectTo(ctx, ctx.path);
    const fields = postedForm(ctx);
    const form: JoinForm = { firstName: text(fields, 'first_name'), lastName: text(fields, 'last_name') };
    const password = text(fields, 'password');
    const again = (errors: Record<string, string>) =>
      sendConsolePage(ctx, setPasswordPage({ csrfToken: kit.csrfToken(ctx), action: ctx.path, email: invitation.email, organization: invitation.organization, form, errors }), 400);
    const missing = joinNameErrors(form);
    if (password === '') missing.password = 'Choose a password';
    if (Object.keys(missing).length > 0) return again(missing);
    let userId: number;
    try {
      const context = { correlationId: ctx.state.requestId, causationId: null, actor: { kind: 'system' as const, name: `invitation-${invitation.inviteId}` }, now: new Date() };
      ({ userId } = await addUser(deps, { orgId: invitation.orgId, email: invitation.email, firstName: form.firstName, lastName: form.lastName, password, roles: [] }, context));
    } catch (error) {
      if (!(error instanceof DomainError) || error.status >= 500) throw error;
      return again({ [fieldOfRefusal(error, [[/first name/i, 'first_name'], [/last name/i, 'last_name'], [/password/i, 'password']], 'password')]: refusalMessage(error) });
    }
    // The password was just set by the person holding the emailed link: that is this sign-in.
    await kit.startSession(ctx, { userId, orgId: invitation.orgId }, SIGN_IN_AMR.password);
    redirectTo(ctx, `${CONSOLE_PATHS.invitations}?notice=joined`);
  });
}
