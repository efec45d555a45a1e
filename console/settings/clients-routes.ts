// /settings/clients (admins): list, register (the use case of `client create`, with its rules),
// rotate a confidential client's secret, delete. Handing out a secret and deleting need a sign-in
// within the last 10 minutes.
import type Router from '@koa/router';
import type { HttpContext, HttpState } from '../../shared/http/http-state.js';
import { READ_MODELS, type OAuthClientRow } from '../../shared/db/read-models.js';
import { DomainError, NotFoundError } from '../../shared/errors.js';
import { isClientId } from '../../shared/oauth/client-decider.js';
import type { OAuthClientType } from '../../shared/oauth/oauth-events.js';
import { deleteClient, registerClient } from '../../command-service/oauth-clients/register-client.js';
import { rotateClientSecret } from '../../command-service/oauth-clients/rotate-client-secret.js';
import { userCommandContext } from '../../command-service/sign-in/sign-in-kit.js';
import { redirectTo } from '../../command-service/sign-in/page-response.js';
import type { ConsoleEnv } from '../console-env.js';
import { guard, postedForm, requireRecentSignIn, sendConfirmPage, sendConsolePage } from '../console-guard.js';
import { fieldOfRefusal, lines, refusalMessage, text, values } from '../console-form.js';
import { CONSOLE_PATHS } from '../console-paths.js';
import { consoleUser } from '../console-user.js';
import { secretPage } from '../pages/common-pages.js';
import { FORM_ERROR, NO_ERRORS } from '../pages/form-fields.js';
import { EMPTY_CLIENT_FORM, clientsPage, newClientPage, registeredPublicClientPage, type ClientForm, type ClientListItem } from './clients-pages.js';

const REFUSAL_FIELDS = [
  [/post-logout/i, 'post_logout_redirect_uris'],
  [/redirect uri/i, 'redirect_uris'],
  [/scope/i, 'scopes'],
  [/client type/i, 'client_type'],
  [/at most \d+ OAuth clients/i, FORM_ERROR],
  [/name/i, 'name'],
] as const;

export function clientsSection(router: Router<HttpState>, env: ConsoleEnv): void {
  const { deps, kit } = env;
  const admin = guard(env, 'admin');

  async function listClients(orgId: number): Promise<ClientListItem[]> {
    return deps
      .db<OAuthClientRow>(READ_MODELS.oauthClients)
      .where({ org_id: orgId, deleted: false })
      .orderBy([{ column: 'created_at' }, { column: 'client_id' }])
      .select('client_id', 'name', 'client_type', 'redirect_uris', 'post_logout_redirect_uris', 'allowed_scopes', 'created_at');
  }

  /** The organization's client named in the path; another organization's (or a deleted one) is 404. */
  async function clientOf(ctx: HttpContext): Promise<Pick<OAuthClientRow, 'client_id' | 'name' | 'client_type'>> {
    const clientId = ctx.params.clientId ?? '';
    const row = isClientId(clientId)
      ? await deps.db<OAuthClientRow>(READ_MODELS.oauthClients).first('client_id', 'name', 'client_type').where({ client_id: clientId, org_id: consoleUser(ctx).orgId, deleted: false })
      : undefined;
    if (row === undefined) throw new NotFoundError('client not found');
    return row;
  }

  router.get(CONSOLE_PATHS.clients, ...admin, async (ctx) => {
    const user = consoleUser(ctx);
    const notice = typeof ctx.query.notice === 'string' ? ctx.query.notice : null;
    sendConsolePage(ctx, clientsPage({ user, csrfToken: kit.csrfToken(ctx), clients: await listClients(user.orgId), notice }));
  });

  router.get(`${CONSOLE_PATHS.clients}/new`, ...admin, (ctx) => {
    sendConsolePage(ctx, newClientPage({ user: consoleUser(ctx), csrfToken: kit.csrfToken(ctx), form: EMPTY_CLIENT_FORM, errors: NO_ERRORS }));
  });

  router.post(`${CONSOLE_PATHS.clients}/new`, ...admin, async (ctx) => {
    const user = consoleUser(ctx);
    const fields = postedForm(ctx);
    const form: ClientForm = {
      name: text(fields, 'name'),
      clientType: text(fields, 'client_type'),
      redirectUris: text(fields, 'redirect_uris'),
      postLogoutRedirectUris: text(fields, 'post_logout_redirect_uris'),
      scopes: values(fields, 'scopes'),
    };
    const again = (errors: Record<string, string>) => sendConsolePage(ctx, newClientPage({ user, csrfToken: kit.csrfToken(ctx), form, errors }), 400);
    if (form.clientType !== 'public' && form.clientType !== 'confidential') return again({ client_type: 'Choose public or confidential' });
    if (form.clientType === 'confidential' && !requireRecentSignIn(env, ctx, 'register a client with a secret', `${CONSOLE_PATHS.clients}/new`)) return;
    try {
      const registered = await registerClient(
        deps,
        {
          orgId: user.orgId,
          name: form.name,
          clientType: form.clientType as OAuthClientType,
          redirectUris: lines(form.redirectUris),
          postLogoutRedirectUris: lines(form.postLogoutRedirectUris),
          allowedScopes: form.scopes,
        },
        userCommandContext(ctx, user.userId, new Date()),
      );
      if (registered.clientSecret === null) {
        return sendConsolePage(ctx, registeredPublicClientPage({ user, csrfToken: kit.csrfToken(ctx), clientId: registered.clientId, name: form.name.trim() }));
      }
      sendConsolePage(
        ctx,
        secretPage({
          user,
          csrfToken: kit.csrfToken(ctx),
          current: CONSOLE_PATHS.clients,
          title: 'Client registered',
          label: 'Client secret',
          secret: registered.clientSecret,
          facts: [{ term: 'Client ID', value: registered.clientId }],
          next: { href: CONSOLE_PATHS.clients, text: 'Back to clients' },
        }),
      );
    } catch (error) {
      if (!(error instanceof DomainError) || error.status >= 500) throw error;
      again({ [fieldOfRefusal(error, REFUSAL_FIELDS, 'name')]: refusalMessage(error) });
    }
  });

  router.get(`${CONSOLE_PATHS.clients}/:clientId/rotate`, ...admin, async (ctx) => {
    const client = await clientOf(ctx);
    if (!requireRecentSignIn(env, ctx, 'rotate a client secret', ctx.path)) return;
    sendConfirmPage(env, ctx, {
      current: CONSOLE_PATHS.clients,
      title: `Rotate the secret of ${client.name}?`,
      consequence: 'Its current secret stops working at once. The app needs the new one, which is shown once.',
      buttonText: 'Rotate secret',
    });
  });

  router.post(`${CONSOLE_PATHS.clients}/:clientId/rotate`, ...admin, async (ctx) => {
    const user = consoleUser(ctx);
    const client = await clientOf(ctx);
    if (!requireRecentSignIn(env, ctx, 'rotate a client secret', ctx.path)) return;
    const { clientSecret } = await rotateClientSecret(deps, { orgId: user.orgId, clientId: client.client_id }, userCommandContext(ctx, user.userId, new Date()));
    sendConsolePage(
      ctx,
      secretPage({
        user,
        csrfToken: kit.csrfToken(ctx),
        current: CONSOLE_PATHS.clients,
        title: 'New client secret',
        label: 'Client secret',
        secret: clientSecret,
        facts: [{ term: 'Client ID', value: client.client_id }],
        next: { href: CONSOLE_PATHS.clients, text: 'Back to clients' },
      }),
    );
  });

  router.get(`${CONSOLE_PATHS.clients}/:clientId/delete`, ...admin, async (ctx) => {
    const client = await clientOf(ctx);
    if (!requireRecentSignIn(env, ctx, 'delete a client', ctx.path)) return;
    sendConfirmPage(env, ctx, {
      current: CONSOLE_PATHS.clients,
      title: `Delete the client ${client.name}?`,
      consequence: 'It stops signing people in at once. This cannot be undone.',
      buttonText: 'Delete client',
    });
  });

  router.post(`${CONSOLE_PATHS.clients}/:clientId/delete`, ...admin, async (ctx) => {
    const user = consoleUser(ctx);
    const client = await clientOf(ctx);
    if (!requireRecentSignIn(env, ctx, 'delete a client', ctx.path)) return;
    await deleteClient(deps, { orgId: user.orgId, clientId: client.client_id }, userCommandContext(ctx, user.userId, new Date()));
    redirectTo(ctx, `${CONSOLE_PATHS.clients}?notice=deleted`);
  });
}
