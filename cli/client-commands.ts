// `npx guestpass client ...`: OAuth clients of an organization.
import { NotFoundError } from '../shared/errors.js';
import { READ_MODELS, type OAuthClientRow } from '../shared/db/read-models.js';
import { streams } from '../shared/domain/events.js';
import { deleteClient, registerClient } from '../command-service/oauth-clients/register-client.js';
import { organizationDecider } from '../shared/domain/organization-decider.js';
import type { Runtime } from '../runtime/runtime.js';
import { integerArg, list, noPositionals, parse, required, spreadList, UsageError } from './cli-args.js';
import { caughtUp, write, type Io, type Result } from './cli-kit.js';

const CLIENT_TYPES = ['public', 'confidential'] as const;

function clientToJson(row: Omit<OAuthClientRow, 'org_id' | 'secret_hash' | 'deleted'>) {
  return {
    client_id: row.client_id,
    name: row.name,
    type: row.client_type,
    redirect_uris: row.redirect_uris,
    post_logout_redirect_uris: row.post_logout_redirect_uris,
    scopes: row.allowed_scopes,
    created_at: row.created_at.toISOString(),
  };
}

function clientToText(c: ReturnType<typeof clientToJson>): string {
  return [
    `${c.client_id}  ${c.type}  ${c.name}  (created ${c.created_at})`,
    `  redirect URIs: ${c.redirect_uris.join(' ')}`,
    ...(c.post_logout_redirect_uris.length > 0 ? [`  post-logout redirect URIs: ${c.post_logout_redirect_uris.join(' ')}`] : []),
    `  scopes: ${c.scopes.join(' ')}`,
  ].join('\n');
}

export async function clientCommand(runtime: Runtime, args: string[], io: Io): Promise<Result> {
  const [action, ...rest] = args;
  if (action === 'create') {
    const parsed = parse(rest, {
      org: { type: 'string' },
      name: { type: 'string' },
      type: { type: 'string' },
      'redirect-uri': { type: 'string', multiple: true },
      'post-logout-redirect-uri': { type: 'string', multiple: true },
      scopes: { type: 'string', multiple: true },
    });
    const { values } = parsed;
    const scopes = spreadList(parsed, 'scopes');
    noPositionals(scopes.rest);
    const clientType = required(values, 'type');
    if (!(CLIENT_TYPES as readonly string[]).includes(clientType)) throw new UsageError('--type must be public or confidential');
    const redirectUris = list(values, 'redirect-uri');
    if (redirectUris.length === 0) throw new UsageError('--redirect-uri is required (repeat it for several)');
    const registered = await write(runtime, (ctx) =>
      registerClient(
        runtime.deps,
        {
          orgId: integerArg(required(values, 'org'), '--org'),
          name: required(values, 'name'),
          clientType: clientType as (typeof CLIENT_TYPES)[number],
          redirectUris,
          postLogoutRedirectUris: list(values, 'post-logout-redirect-uri'),
          // Given but empty stays empty, so the decider refuses it rather than silently defaulting.
          ...('scopes' in values ? { allowedScopes: scopes.items } : {}),
        },
        ctx,
      ),
    );
    const { clientId, clientSecret } = registered;
    return {
      json: clientSecret === null ? { client_id: clientId } : { client_id: clientId, client_secret: clientSecret },
      text:
        clientSecret === null
          ? `public OAuth client ${clientId} created`
          : `confidential OAuth client ${clientId} created; client secret, shown once (only its hash is stored):\n${clientSecret}`,
    };
  }
  if (action === 'list') {
    const { values, positionals } = parse(rest, { org: { type: 'string' } });
    noPositionals(positionals);
    const orgId = integerArg(required(values, 'org'), '--org');
    const organization = await runtime.deps.handler.load(streams.organization(orgId), organizationDecider);
    if (organization.state.status === 'absent') throw new NotFoundError(`organization ${orgId} not found`);
    const rows = await write(runtime, async () => {
      if (!(await caughtUp(runtime, [READ_MODELS.oauthClients]))) {
        io.err('guestpass: warning: the oauth_clients read model is behind the log; the list may be incomplete');
      }
      // Named columns: the secret hash never leaves the read model through the CLI.
      return runtime
        .knex<OAuthClientRow>(READ_MODELS.oauthClients)
        .where({ org_id: orgId, deleted: false })
        .orderBy([{ column: 'created_at' }, { column: 'client_id' }])
        .select('client_id', 'name', 'client_type', 'redirect_uris', 'post_logout_redirect_uris', 'allowed_scopes', 'created_at');
    });
    const clients = rows.map(clientToJson);
    return {
      json: { clients },
      text: clients.length === 0 ? `organization ${orgId} has no OAuth clients` : clients.map(clientToText).join('\n'),
    };
  }
  if (action === 'delete') {
    const { values, positionals } = parse(rest, { org: { type: 'string' }, client: { type: 'string' } });
    noPositionals(positionals);
    const orgId = integerArg(required(values, 'org'), '--org');
    const clientId = required(values, 'client');
    await write(runtime, (ctx) => deleteClient(runtime.deps, { orgId, clientId }, ctx));
    return { json: { client_id: clientId, deleted: true }, text: `OAuth client ${clientId} deleted` };
  }
  throw new UsageError('client create|list|delete');
}
