// Subject keys for crypto-shredding (shared/crypto/postgres-subject-key-store.ts) and the
// sequences integer ids are drawn from (shared/domain/postgres-id-allocator.ts).
import type { Migration } from '../migration.js';

const SEQUENCES = ['organization_id_seq', 'facility_id_seq', 'user_id_seq', 'pass_id_seq'];

export const migration: Migration = {
  name: '002_subject_keys_and_ids',
  async up(knex) {
    await knex.raw(`
      CREATE TABLE subject_keys (
        key_id     text        PRIMARY KEY,
        subject_id text        NOT NULL,
        key        bytea       NOT NULL CHECK (octet_length(key) = 32),
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    // destroy(subjectId) deletes by subject.
    await knex.raw('CREATE INDEX subject_keys_subject_id_idx ON subject_keys (subject_id)');
    for (const sequence of SEQUENCES) await knex.raw(`CREATE SEQUENCE ${sequence} AS bigint START 1`);
  },
  async down(knex) {
    for (const sequence of SEQUENCES) await knex.raw(`DROP SEQUENCE IF EXISTS ${sequence}`);
    await knex.raw('DROP TABLE IF EXISTS subject_keys');
  },
};
