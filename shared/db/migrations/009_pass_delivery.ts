// The pass delivery reactor's work list (projections/pass-delivery-reactor.ts): one row per batch
// to deliver, written in the same transaction as the reactor's checkpoint (forwarder_checkpoints,
// name `pass-delivery`), so a batch is scheduled exactly once. The outcome of every attempt is an
// event on the batch's delivery stream; this table only says when to look at a batch next.
// Nothing personal is here in the clear: a row carries its batch's first PassCreated data, whose
// guest details stay sealed under the batch's key (destroying the key erases them here too).
import type { Migration } from '../migration.js';

export const migration: Migration = {
  name: '009_pass_delivery',
  async up(knex) {
    await knex.raw(`CREATE TABLE pass_delivery_jobs (
      batch_id        text        PRIMARY KEY,
      org_id          bigint      NOT NULL,
      pass            jsonb       NOT NULL,
      event_id        uuid        NOT NULL,
      correlation_id  text        NOT NULL,
      next_attempt_at timestamptz NOT NULL,
      done            boolean     NOT NULL DEFAULT false,
      created_at      timestamptz NOT NULL DEFAULT now(),
      updated_at      timestamptz NOT NULL DEFAULT now()
    )`);
    await knex.raw('CREATE INDEX pass_delivery_jobs_due_idx ON pass_delivery_jobs (next_attempt_at) WHERE NOT done');
  },
  async down(knex) {
    await knex.raw('DROP TABLE IF EXISTS pass_delivery_jobs');
  },
};
