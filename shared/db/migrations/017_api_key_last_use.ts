// When each organization API key was last used (shared/auth/api-key-last-use.ts). Operational data,
// not a domain event: a use changes no state of the key, and an event per request (or per minute)
// would swell the log for nothing. So it is not rebuildable from the log and a rebuild of api_keys
// leaves it alone; losing it loses only "last used" times.
import type { Migration } from '../migration.js';

export const migration: Migration = {
  name: '017_api_key_last_use',
  async up(knex) {
    await knex.raw(`CREATE TABLE api_key_last_use (
      key_id       text        PRIMARY KEY,
      last_used_at timestamptz NOT NULL
    )`);
  },
  async down(knex) {
    await knex.raw('DROP TABLE IF EXISTS api_key_last_use');
  },
};
