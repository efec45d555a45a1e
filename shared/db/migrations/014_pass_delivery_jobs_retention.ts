// The pass delivery work list keeps a batch's row once it is done (a replayed older round must not
// make it due again), and then for DONE_JOB_RETENTION (projections/pass-delivery-retention.ts)
// only: each row carries its batch's first PassCreated data, and a busy service adds one a batch.
// The sweeper finds the done rows by when they were done.
import type { Migration } from '../migration.js';

export const migration: Migration = {
  name: '014_pass_delivery_jobs_retention',
  async up(knex) {
    await knex.raw('CREATE INDEX pass_delivery_jobs_done_idx ON pass_delivery_jobs (updated_at) WHERE done');
  },
  async down(knex) {
    await knex.raw('DROP INDEX IF EXISTS pass_delivery_jobs_done_idx');
  },
};
