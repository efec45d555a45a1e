// revoked_token_families: how a revocation reaches the read side. The query service refuses an
// access token whose family is here, before the token itself expires.
import type { Knex } from 'knex';
import type { RevokedTokenFamilyRow } from '../shared/db/read-models.js';
import { READ_MODELS } from '../shared/db/read-models.js';
import type { Projection } from './projection.js';

export const revokedTokenFamiliesProjection: Projection<RevokedTokenFamilyRow> = {
  name: READ_MODELS.revokedTokenFamilies,
  version: 1,
  handles: ['TokenFamilyRevoked'],
  keyColumn: 'family_id',

  keyOf(event) {
    return event.type === 'TokenFamilyRevoked' ? event.data.familyId : null;
  },

  apply(row, event) {
    if (event.type !== 'TokenFamilyRevoked' || row) return undefined;
    return { family_id: event.data.familyId, reason: event.data.reason, revoked_at: new Date(event.metadata.occurredAt) };
  },

  async createTable(knex: Knex, table: string) {
    await knex.raw(
      `CREATE TABLE ?? (
        family_id  text        PRIMARY KEY,
        reason     text        NOT NULL,
        revoked_at timestamptz NOT NULL
      )`,
      [table],
    );
  },
};
