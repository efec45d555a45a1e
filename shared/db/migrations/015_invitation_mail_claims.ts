// Which invitations' emails a worker has taken on (projections/invitation-mail-worker.ts): a claim
// makes one worker of many send an invitation's email, a stale claim (its worker died) is taken
// over, and a done one is not looked at again. What was sent is the invitation's mail stream's
// events; this table only saves reading those streams again.
import type { Migration } from '../migration.js';

export const migration: Migration = {
  name: '015_invitation_mail_claims',
  async up(knex) {
    await knex.raw(`CREATE TABLE invitation_mail_claims (
      invite_id  bigint      PRIMARY KEY,
      claimed_at timestamptz NOT NULL,
      attempts   integer     NOT NULL DEFAULT 0,
      done       boolean     NOT NULL DEFAULT false
    )`);
  },
  async down(knex) {
    await knex.raw('DROP TABLE IF EXISTS invitation_mail_claims');
  },
};
