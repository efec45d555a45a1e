// The join page's passkey (an invitee without an account makes it with a passkey instead of a
// password), driven by /signin/passkey.js (#passkey-join) with JSON and the CSRF header:
//
//   POST /invitations/join/{ref}/passkey/options   {first_name, last_name}: creation options
//   POST /invitations/join/{ref}/passkey/verify    {first_name, last_name, credential}: the account,
//                                                  its passkey and a session (amr hwk+user)
//
// The account does not exist while the authenticator makes the passkey, yet the passkey must carry
// the account's user handle: the options draw the user id, and the ceremony (server-side, bound to
// this browser, spent once; browser-ceremonies.ts) keeps it, so the browser never names it. The
// attestation is checked before anything is written; then the user is added (addUser, the email
// claimed once in the organization, as the password form does) and the passkey recorded on it.
import type Router from '@koa/router';
import type { HttpContext, HttpState } from '../../shared/http/http-state.js';
import { READ_MODELS } from '../../shared/db/read-models.js';
import { ConflictError, ValidationError } from '../../shared/errors.js';
import { SIGN_IN_AMR } from '../../shared/sign-in/sign-in-methods.js';
import { relyingPartyOf } from '../../shared/sign-in/passkeys/relying-party.js';
import { parseRegistrationResponse } from '../../shared/sign-in/passkeys/webauthn-responses.js';
import { addUser } from '../../command-service/users/add-user.js';
import { userCommandContext } from '../../command-service/sign-in/sign-in-kit.js';
import { browserCeremonies } from '../../command-service/sign-in/passkeys/browser-ceremonies.js';
import { formOrJsonBody } from '../../command-service/sign-in/passkeys/form-or-json-body.js';
import { PASSKEY_REGISTRATION_FAILED, newUserPasskeyOptions, recordPasskey, verifyPasskeyRegistration } from '../../command-service/sign-in/passkeys/register-passkey.js';
import type { ConsoleEnv } from '../console-env.js';
import { CONSOLE_PATHS } from '../console-paths.js';
import { invitationOfLink, type LinkedInvitation } from './invitation-link.js';
import { joinNameErrors, type JoinForm } from './invitations-pages.js';

/** Where the join page's script posts, below the join link's own path. */
const JOIN_PASSKEY_OPTIONS = '/passkey/options';
const JOIN_PASSKEY_VERIFY = '/passkey/verify';

export function joinPasskeySection(router: Router<HttpState>, env: ConsoleEnv): void {
  const { deps, kit } = env;
  const relyingParty = relyingPartyOf(deps.oauth.issuer);
  const ceremonies = browserCeremonies(deps.db, deps.oauth.issuer);
  const before = [env.forms.middleware({ trustProxy: env.trustProxy }), formOrJsonBody()];
  const join = `${CONSOLE_PATHS.invitations}/join/:ref`;

  /** The link's invitation for someone still without an account, and the names posted with it. */
  async function joining(ctx: HttpContext): Promise<{ invitation: LinkedInvitation; form: JoinForm }> {
    kit.checkCsrf(ctx);
    const invitation = await invitationOfLink(deps, ctx.params.ref);
    if (invitation.hasAccount) throw new ConflictError('you already have an account: sign in to answer the invitation');
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    const form: JoinForm = { firstName: typeof body.first_name === 'string' ? body.first_name : '', lastName: typeof body.last_name === 'string' ? body.last_name : '' };
    const missing = joinNameErrors(form);
    if (missing.first_name !== undefined && missing.last_name !== undefined) throw new ValidationError('Enter your first name and last name');
    const one = missing.first_name ?? missing.last_name;
    if (one !== undefined) throw new ValidationError(one);
    return { invitation, form };
  }

  function sendJson(ctx: HttpContext, status: number, value: unknown): void {
    // Challenges and credential data: never stored by a cache.
    ctx.set('Cache-Control', 'no-store');
    ctx.status = status;
    ctx.body = value;
  }

  router.post(`${join}${JOIN_PASSKEY_OPTIONS}`, ...before, async (ctx) => {
    const { invitation, form } = await joining(ctx);
    const [userId] = await deps.ids.next('user');
    if (userId === undefined) throw new Error('id allocator returned no user id');
    const displayName = `${form.firstName.trim()} ${form.lastName.trim()}`;
    const options = await newUserPasskeyOptions({ userId, email: invitation.email, displayName, relyingParty });
    await ceremonies.begin(ctx, { purpose: 'registration', challenge: options.challenge, userId }, new Date());
    sendJson(ctx, 200, options);
  });

  router.post(`${join}${JOIN_PASSKEY_VERIFY}`, ...before, async (ctx) => {
    const { invitation, form } = await joining(ctx);
    const now = new Date();
    const response = parseRegistrationResponse(ctx.request.body);
    const ceremony = await ceremonies.take(ctx, 'registration', now);
    // Only a ceremony begun above names a user who does not exist yet (the account page's names its signed-in user).
    const userId = ceremony?.userId ?? null;
    if (userId === null || (await deps.db(READ_MODELS.users).first('user_id').where({ user_id: userId })) !== undefined) {
      throw new ValidationError(PASSKEY_REGISTRATION_FAILED);
    }
    const passkey = await verifyPasskeyRegistration(deps, { userId, response, ceremony, relyingParty });
    const context = { correlationId: ctx.state.requestId, causationId: null, actor: { kind: 'system' as const, name: `invitation-${invitation.inviteId}` }, now };
    await addUser(deps, { orgId: invitation.orgId, email: invitation.email, firstName: form.firstName, lastName: form.lastName, password: null, roles: [], userId }, context);
    await recordPasskey(deps, userId, passkey, userCommandContext(ctx, userId, now));
    // The passkey was just made by the person holding the emailed link, with user verification: that is this sign-in.
    await kit.startSession(ctx, { userId, orgId: invitation.orgId }, SIGN_IN_AMR.passkey);
    sendJson(ctx, 201, { success: true, location: `${CONSOLE_PATHS.invitations}?notice=joined` });
  });
}
