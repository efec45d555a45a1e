// api_keys: one row per organization API key, found by the hash of the presented key.
// Version 2 adds the key's name (ApiKeyCreated version 2): a rebuild on start fills it.
// When a key was last used is not here: see shared/auth/api-key-last-use.ts.
import type { Knex } from 'knex';
import type { ApiKeyRow } from '../shared/db/read-models.js';
import { READ_MODELS } from '../shared/db/read-models.js';
import type { Projection, ProjectionEvent } from './projection.js';

export const apiKeysProjection: Projection<ApiKeyRow> = {
  name: READ_MODELS.apiKeys,
  version: 2,
  handles: ['ApiKeyCreated', 'ApiKeyRevoked'],
  keyColumn: 'key_id',

  keyOf(event: ProjectionEvent) {
    switch (event.type) {
      case 'ApiKeyCreated':
      case 'ApiKeyRevoked':
        return event.data.keyId;
      default:
        return null;
    }
  },

  apply(row, event) {
    switch (event.type) {
      case 'ApiKeyCreated': {
        if (row) return undefined;
        const d = event.data;
        return {
          key_id: d.keyId,
          org_id: d.orgId,
          user_id: d.userId,
          key_hash: d.keyHash,
          scopes: [...d.scopes],
          expires_at: d.expiresAt === null ? null : new Date(d.expiresAt),
          allowed_ips: [...d.allowedIps],
          name: d.name,
          revoked: false,
          created_at: new Date(event.metadata.occurredAt),
        };
      }
      case 'ApiKeyRevoked':
        return row && !row.revoked ? { ...row, revoked: true } : undefined;
      default:
        return undefined;
    }
  },

  async createTable(knex: Knex, table: string) {
    await knex.raw(
      `CREATE TABLE ?? (
        key_id      text        PRIMARY KEY,
        org_id      bigint      NOT NULL,
        user_id     bigint      NOT NULL,
        key_hash    text        NOT NULL,
        scopes      text[]      NOT NULL,
        expires_at  timestamptz,
        allowed_ips text[]      NOT NULL,
        name        text,
        revoked     boolean     NOT NULL,
        created_at  timestamptz NOT NULL
      )`,
      [table],
    );
  },

  // Every API request authenticates by this lookup.
  indexes: [{ suffix: 'key_hash_key', unique: true, on: '(key_hash)' }],
};
