// The counters of the rate limits and failure throttles that every instance shares
// (shared/http/rate-limit-store.ts), in rate-limiter-flexible's PostgreSQL layout. UNLOGGED: a
// counter is worth no WAL, and after a server crash (the only time PostgreSQL empties an unlogged
// table) every limit simply starts again from zero; a service restart keeps them, lockout levels
// included. Keys are a limiter's prefix and an address, a hash or an id, never personal data.
import type { Migration } from '../migration.js';

export const migration: Migration = {
  name: '013_rate_limit_counters',
  async up(knex) {
    await knex.raw(`
      CREATE UNLOGGED TABLE rate_limit_counters (
        key    varchar(255) PRIMARY KEY,
        points integer      NOT NULL DEFAULT 0,
        expire bigint
      )`);
    // The sweeper deletes what expired an hour ago.
    await knex.raw('CREATE INDEX rate_limit_counters_expire_idx ON rate_limit_counters (expire)');
  },
  async down(knex) {
    await knex.raw('DROP TABLE rate_limit_counters');
  },
};
