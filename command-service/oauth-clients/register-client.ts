// Use cases: register and delete an OAuth client (CLI `client create|delete`). The secret of a
// confidential client is generated here, returned once, and only its SHA-256 reaches the event.
import type { CommandDeps } from '../command-deps.js';
import type { CommandContext } from '../../shared/event-store/command-handler.js';
import type { Position } from '../../shared/event-store/event-store.js';
import { streams } from '../../shared/domain/events.js';
import { organizationDecider } from '../../shared/domain/organization-decider.js';
import { NotFoundError } from '../../shared/errors.js';
import { newClientId, oauthClientDecider } from '../../shared/oauth/client-decider.js';
import { oauthStreams, type OAuthClientType } from '../../shared/oauth/oauth-events.js';
import { newClientSecret } from '../../shared/oauth/opaque-credentials.js';
import { DEFAULT_SCOPES } from '../../shared/oauth/scopes.js';
import { READ_MODELS } from '../../shared/db/read-models.js';

export interface RegisterClientInput {
  readonly orgId: number;
  readonly name: string;
  readonly clientType: OAuthClientType;
  readonly redirectUris: readonly string[];
  readonly postLogoutRedirectUris?: readonly string[];
  /** Omit for the default `openid profile email`. */
  readonly allowedScopes?: readonly string[];
}

export interface RegisteredClient {
  readonly clientId: string;
  /** Shown once; null for a public client. */
  readonly clientSecret: string | null;
  readonly position: Position;
}

export async function registerClient(deps: CommandDeps, input: RegisterClientInput, ctx: CommandContext): Promise<RegisteredClient> {
  const organization = await deps.handler.load(streams.organization(input.orgId), organizationDecider);
  if (organization.state.status === 'absent') throw new NotFoundError(`organization ${input.orgId} not found`);
  const clientId = newClientId();
  const secret = input.clientType === 'confidential' ? newClientSecret() : null;
  const result = await deps.handler.handle(
    oauthStreams.clients(input.orgId),
    oauthClientDecider,
    {
      type: 'RegisterOAuthClient',
      data: {
        orgId: input.orgId,
        clientId,
        name: input.name,
        clientType: input.clientType,
        secretHash: secret?.hash ?? null,
        redirectUris: input.redirectUris,
        postLogoutRedirectUris: input.postLogoutRedirectUris ?? [],
        allowedScopes: input.allowedScopes ?? DEFAULT_SCOPES,
      },
    },
    ctx,
  );
  await deps.watermark.waitFor(result.position, deps.projectionWaitMs, [READ_MODELS.oauthClients]);
  return { clientId, clientSecret: secret?.value ?? null, position: result.position };
}

export async function deleteClient(deps: CommandDeps, input: { orgId: number; clientId: string }, ctx: CommandContext): Promise<{ position: Position }> {
  const result = await deps.handler.handle(oauthStreams.clients(input.orgId), oauthClientDecider, { type: 'DeleteOAuthClient', data: input }, ctx);
  await deps.watermark.waitFor(result.position, deps.projectionWaitMs, [READ_MODELS.oauthClients]);
  return { position: result.position };
}
