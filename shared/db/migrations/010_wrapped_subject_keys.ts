// Data keys wrapped by a key-encryption key (shared/crypto/data-key-ring.ts): a row of
// subject_keys holds either its key in the clear (`key`, rows from before this migration) or the
// id of the KEK that wrapped it and the wrapped key, never both. A migration has no KEK, so the
// legacy rows are wrapped by PostgresSubjectKeyStore.rewrapAll(), which every start runs.
// contact_search_key holds the one contact search key (shared/crypto/contact-search.ts), wrapped
// the same way.
import type { Migration } from '../migration.js';

export const migration: Migration = {
  name: '010_wrapped_subject_keys',
  async up(knex) {
    await knex.raw(`
      ALTER TABLE subject_keys
        ADD COLUMN kek_id      text,
        ADD COLUMN wrapped_key bytea,
        ALTER COLUMN key DROP NOT NULL,
        ADD CONSTRAINT subject_keys_wrapped_or_legacy CHECK (
          (key IS NOT NULL AND kek_id IS NULL AND wrapped_key IS NULL)
          OR (key IS NULL AND kek_id IS NOT NULL AND wrapped_key IS NOT NULL)
        )`);
    // rewrapAll() finds the legacy rows (kek_id NULL) and those under an old KEK by index, and
    // lists the KEKs in use with a skip scan: cheap on every start when nothing is left to do.
    await knex.raw('CREATE INDEX subject_keys_kek_id_idx ON subject_keys (kek_id)');
    await knex.raw(`
      CREATE TABLE contact_search_key (
        singleton   boolean     PRIMARY KEY DEFAULT true CHECK (singleton),
        kek_id      text        NOT NULL,
        wrapped_key bytea       NOT NULL,
        created_at  timestamptz NOT NULL DEFAULT now()
      )`);
  },
  async down(knex) {
    // Going back would need every key in the clear, and a migration has no KEK to unwrap them:
    // it refuses rather than destroy the wrapped keys (and with them their subjects' data).
    const { rows } = await knex.raw('SELECT 1 FROM subject_keys WHERE key IS NULL LIMIT 1');
    if (rows.length > 0) throw new Error('010_wrapped_subject_keys cannot be undone while subject_keys holds wrapped keys');
    await knex.raw('DROP TABLE IF EXISTS contact_search_key');
    await knex.raw('DROP INDEX IF EXISTS subject_keys_kek_id_idx');
    await knex.raw('ALTER TABLE subject_keys DROP CONSTRAINT IF EXISTS subject_keys_wrapped_or_legacy');
    await knex.raw('ALTER TABLE subject_keys ALTER COLUMN key SET NOT NULL, DROP COLUMN wrapped_key, DROP COLUMN kek_id');
  },
};
