// The OAuth signing keys (shared/oauth/signing-keys.ts): private halves sealed with AES-256-GCM
// under the key-encryption key, public halves as JWKs. At most one current key (rotated_at null),
// enforced by a partial unique index so two first starts or two rotations cannot both win.
import type { Migration } from '../migration.js';

export const migration: Migration = {
  name: '005_oauth_signing_keys',
  async up(knex) {
    await knex.raw(`
      CREATE TABLE oauth_signing_keys (
        kid                    text        PRIMARY KEY,
        alg                    text        NOT NULL CHECK (alg = 'RS256'),
        public_jwk             jsonb       NOT NULL,
        kek_id                 text        NOT NULL,
        private_key_iv         bytea       NOT NULL,
        private_key_ciphertext bytea       NOT NULL,
        private_key_tag        bytea       NOT NULL,
        created_at             timestamptz NOT NULL,
        rotated_at             timestamptz,
        retire_after           timestamptz,
        CONSTRAINT oauth_signing_keys_rotation_check CHECK ((rotated_at IS NULL) = (retire_after IS NULL))
      )`);
    await knex.raw('CREATE UNIQUE INDEX oauth_signing_keys_one_current ON oauth_signing_keys ((true)) WHERE rotated_at IS NULL');
  },
  async down(knex) {
    await knex.raw('DROP TABLE IF EXISTS oauth_signing_keys');
  },
};
