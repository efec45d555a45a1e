// oauth_clients: the client registry every protocol endpoint looks clients up in. A deleted
// client keeps its row, marked, so its id is never reissued and replays stay idempotent.
import type { Knex } from 'knex';
import type { OAuthClientRow } from '../shared/db/read-models.js';
import { READ_MODELS } from '../shared/db/read-models.js';
import type { Projection } from './projection.js';

export const oauthClientsProjection: Projection<OAuthClientRow> = {
  name: READ_MODELS.oauthClients,
  version: 1,
  handles: ['OAuthClientRegistered', 'OAuthClientSecretRotated', 'OAuthClientDeleted'],
  keyColumn: 'client_id',

  keyOf(event) {
    return event.type === 'OAuthClientRegistered' || event.type === 'OAuthClientSecretRotated' || event.type === 'OAuthClientDeleted'
      ? event.data.clientId
      : null;
  },

  apply(row, event) {
    switch (event.type) {
      case 'OAuthClientRegistered': {
        if (row) return undefined;
        const d = event.data;
        return {
          client_id: d.clientId,
          org_id: d.orgId,
          name: d.name,
          client_type: d.clientType,
          secret_hash: d.secretHash,
          redirect_uris: [...d.redirectUris],
          post_logout_redirect_uris: [...d.postLogoutRedirectUris],
          allowed_scopes: [...d.allowedScopes],
          deleted: false,
          created_at: new Date(event.metadata.occurredAt),
        };
      }
      case 'OAuthClientSecretRotated':
        return row && !row.deleted && row.secret_hash !== event.data.secretHash ? { ...row, secret_hash: event.data.secretHash } : undefined;
      case 'OAuthClientDeleted':
        return row && !row.deleted ? { ...row, deleted: true } : undefined;
      default:
        return undefined;
    }
  },

  async createTable(knex: Knex, table: string) {
    await knex.raw(
      `CREATE TABLE ?? (
        client_id                 text        PRIMARY KEY,
        org_id                    bigint      NOT NULL,
        name                      text        NOT NULL,
        client_type               text        NOT NULL,
        secret_hash               text,
        redirect_uris             text[]      NOT NULL,
        post_logout_redirect_uris text[]      NOT NULL,
        allowed_scopes            text[]      NOT NULL,
        deleted                   boolean     NOT NULL,
        created_at                timestamptz NOT NULL
      )`,
      [table],
    );
  },

  indexes: [{ suffix: 'org_idx', on: '(org_id, created_at)' }],
};
