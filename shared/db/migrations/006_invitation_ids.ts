// The sequence invitation ids are drawn from (shared/domain/postgres-id-allocator.ts, kind
// `invitation`), beside the other id sequences of migration 002.
import type { Migration } from '../migration.js';

export const migration: Migration = {
  name: '006_invitation_ids',
  async up(knex) {
    await knex.raw('CREATE SEQUENCE invitation_id_seq AS bigint START 1');
  },
  async down(knex) {
    await knex.raw('DROP SEQUENCE IF EXISTS invitation_id_seq');
  },
};
