// Pending WebAuthn ceremonies (command-service/sign-in/passkeys/passkey-challenges.ts), shared by
// every command-service instance, so a ceremony may end on another one than it began on. Only a
// hash of the browser's handle is stored: the handle is the bearer of the ceremony.
import type { Migration } from '../migration.js';

export const migration: Migration = {
  name: '008_passkey_ceremonies',
  async up(knex) {
    await knex.raw(`CREATE TABLE passkey_ceremonies (
      handle_hash bytea       PRIMARY KEY,
      purpose     text        NOT NULL CHECK (purpose IN ('registration', 'authentication')),
      challenge   text        NOT NULL,
      user_id     bigint,
      expires_at  timestamptz NOT NULL
    )`);
    await knex.raw('CREATE INDEX passkey_ceremonies_expires_idx ON passkey_ceremonies (expires_at)');
  },
  async down(knex) {
    await knex.raw('DROP TABLE IF EXISTS passkey_ceremonies');
  },
};
