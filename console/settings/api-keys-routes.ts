// /settings/api-keys (admins): list, create (the use case of `apikey create`; the key acts for the
// admin creating it and is shown exactly once), revoke (the use case of `apikey revoke`, scoped to
// the organization). Creating and revoking need a sign-in within the last 10 minutes. The API
// reads the api_keys read model, which both use cases wait for: a key works, and stops, at once.
import type Router from '@koa/router';
import type { HttpState } from '../../shared/http/http-state.js';
import { READ_MODELS } from '../../shared/db/read-models.js';
import { DomainError } from '../../shared/errors.js';
import { createApiKey } from '../../command-service/api-keys/create-api-key.js';
import { revokeApiKey } from '../../command-service/api-keys/revoke-api-key.js';
import { userCommandContext } from '../../command-service/sign-in/sign-in-kit.js';
import { redirectTo } from '../../command-service/sign-in/page-response.js';
import type { ConsoleEnv } from '../console-env.js';
import { guard, postedForm, requireRecentSignIn, sendConfirmPage, sendConsolePage } from '../console-guard.js';
import { fieldOfRefusal, lines, refusalMessage, text, values } from '../console-form.js';
import { CONSOLE_PATHS } from '../console-paths.js';
import { consoleUser } from '../console-user.js';
import { secretPage } from '../pages/common-pages.js';
import { NO_ERRORS } from '../pages/form-fields.js';
import { EMPTY_API_KEY_FORM, apiKeysPage, newApiKeyPage, type ApiKeyForm, type ApiKeyListItem } from './api-keys-pages.js';
import { NotFoundError } from '../../shared/errors.js';
import { LAST_USE_TABLE } from '../../shared/auth/api-key-last-use.js';
import { MAX_API_KEY_NAME_LENGTH } from '../../shared/domain/api-key-decider.js';

const REFUSAL_FIELDS = [
  [/name/i, 'name'],
  [/scope/i, 'scopes'],
  [/expir/i, 'expires_on'],
  [/ip|address|cidr|range/i, 'allowed_ips'],
] as const;

const KEY_ID = /^key_[0-9a-f]{24}$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

export function apiKeysSection(router: Router<HttpState>, env: ConsoleEnv): void {
  const { deps, kit } = env;
  const admin = guard(env, 'admin');

  async function listKeys(orgId: number): Promise<ApiKeyListItem[]> {
    const rows = await deps
      .db({ k: READ_MODELS.apiKeys })
      .leftJoin({ u: READ_MODELS.users }, 'u.user_id', 'k.user_id')
      .leftJoin({ l: LAST_USE_TABLE }, 'l.key_id', 'k.key_id')
      .where('k.org_id', orgId)
      .orderBy([{ column: 'k.revoked' }, { column: 'k.created_at', order: 'desc' }, { column: 'k.key_id' }])
      .select('k.key_id', 'k.name', 'k.scopes', 'u.email as created_by', 'k.created_at', 'k.expires_at', 'k.allowed_ips', 'k.revoked', 'l.last_used_at');
    return rows as ApiKeyListItem[];
  }

  async function keyOf(orgId: number, keyId: string | undefined): Promise<string> {
    const row = keyId !== undefined && KEY_ID.test(keyId) ? await deps.db(READ_MODELS.apiKeys).first('key_id').where({ key_id: keyId, org_id: orgId, revoked: false }) : undefined;
    if (row === undefined) throw new NotFoundError('API key not found');
    return row.key_id as string;
  }

  router.get(CONSOLE_PATHS.apiKeys, ...admin, async (ctx) => {
    const user = consoleUser(ctx);
    const notice = typeof ctx.query.notice === 'string' ? ctx.query.notice : null;
    sendConsolePage(ctx, apiKeysPage({ user, csrfToken: kit.csrfToken(ctx), keys: await listKeys(user.orgId), notice }));
  });

  router.get(`${CONSOLE_PATHS.apiKeys}/new`, ...admin, (ctx) => {
    if (!requireRecentSignIn(env, ctx, 'create an API key', ctx.path)) return;
    sendConsolePage(ctx, newApiKeyPage({ user: consoleUser(ctx), csrfToken: kit.csrfToken(ctx), form: EMPTY_API_KEY_FORM, errors: NO_ERRORS }));
  });

  router.post(`${CONSOLE_PATHS.apiKeys}/new`, ...admin, async (ctx) => {
    const user = consoleUser(ctx);
    if (!requireRecentSignIn(env, ctx, 'create an API key', ctx.path)) return;
    const fields = postedForm(ctx);
    const form: ApiKeyForm = { name: text(fields, 'name').trim(), scopes: values(fields, 'scopes'), expiresOn: text(fields, 'expires_on').trim(), allowedIps: text(fields, 'allowed_ips') };
    const again = (errors: Record<string, string>) => sendConsolePage(ctx, newApiKeyPage({ user, csrfToken: kit.csrfToken(ctx), form, errors }), 400);
    if (form.name === '') return again({ name: 'Enter a name for the key' });
    if ([...form.name].length > MAX_API_KEY_NAME_LENGTH) return again({ name: `Enter a name of at most ${MAX_API_KEY_NAME_LENGTH} characters` });
    if (form.scopes.length === 0) return again({ scopes: 'Choose at least one scope' });
    if (form.expiresOn !== '' && !DATE.test(form.expiresOn)) return again({ expires_on: 'Enter the expiry as a date, such as 2027-01-31' });
    try {
      const created = await createApiKey(
        deps,
        { orgId: user.orgId, userId: user.userId, name: form.name, scopes: form.scopes, expiresAt: form.expiresOn === '' ? null : form.expiresOn, allowedIps: lines(form.allowedIps) },
        userCommandContext(ctx, user.userId, new Date()),
      );
      sendConsolePage(
        ctx,
        secretPage({
          user,
          csrfToken: kit.csrfToken(ctx),
          current: CONSOLE_PATHS.apiKeys,
          title: 'API key created',
          label: 'API key',
          secret: created.apiKey,
          facts: [
            { term: 'Name', value: form.name },
            { term: 'Key ID', value: created.keyId },
          ],
          next: { href: CONSOLE_PATHS.apiKeys, text: 'Back to API keys' },
        }),
      );
    } catch (error) {
      if (!(error instanceof DomainError) || error.status >= 500) throw error;
      again({ [fieldOfRefusal(error, REFUSAL_FIELDS, 'scopes')]: refusalMessage(error) });
    }
  });

  router.get(`${CONSOLE_PATHS.apiKeys}/:keyId/revoke`, ...admin, async (ctx) => {
    const keyId = await keyOf(consoleUser(ctx).orgId, ctx.params.keyId);
    if (!requireRecentSignIn(env, ctx, 'revoke an API key', ctx.path)) return;
    sendConfirmPage(env, ctx, {
      current: CONSOLE_PATHS.apiKeys,
      title: `Revoke key ${keyId}?`,
      consequence: 'It stops working at once. This cannot be undone.',
      buttonText: 'Revoke',
    });
  });

  router.post(`${CONSOLE_PATHS.apiKeys}/:keyId/revoke`, ...admin, async (ctx) => {
    const user = consoleUser(ctx);
    const keyId = await keyOf(user.orgId, ctx.params.keyId);
    if (!requireRecentSignIn(env, ctx, 'revoke an API key', ctx.path)) return;
    await revokeApiKey(deps, { keyId, orgId: user.orgId }, userCommandContext(ctx, user.userId, new Date()));
    redirectTo(ctx, `${CONSOLE_PATHS.apiKeys}?notice=revoked`);
  });
}
