// ClientDirectory over the oauth_clients read model. Deleted and unknown clients are both null.
import type { Knex } from 'knex';
import { READ_MODELS, type OAuthClientRow } from '../db/read-models.js';
import type { ClientDirectory, OAuthClient } from './client-decider.js';
import type { OAuthScope } from './scopes.js';

export function clientOfRow(row: OAuthClientRow): OAuthClient {
  return {
    clientId: row.client_id,
    orgId: Number(row.org_id),
    name: row.name,
    clientType: row.client_type,
    secretHash: row.secret_hash,
    redirectUris: row.redirect_uris,
    postLogoutRedirectUris: row.post_logout_redirect_uris,
    allowedScopes: row.allowed_scopes as OAuthScope[],
  };
}

export class PostgresClientDirectory implements ClientDirectory {
  constructor(private readonly db: Knex) {}

  async findClient(clientId: string): Promise<OAuthClient | null> {
    const row: OAuthClientRow | undefined = await this.db(READ_MODELS.oauthClients).where({ client_id: clientId, deleted: false }).first();
    return row ? clientOfRow(row) : null;
  }
}
