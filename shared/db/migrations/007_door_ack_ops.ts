// An expiry removes a credential at the version of the add it ends (no event bumps it), so an
// acknowledgement is one per (credential, controller, version, op): keyed without the op, the
// removal's acknowledgement collided with the add's and was dropped.
import type { Migration } from '../migration.js';

export const migration: Migration = {
  name: '007_door_ack_ops',
  async up(knex) {
    await knex.raw('ALTER TABLE door_credential_acks DROP CONSTRAINT door_credential_acks_pkey');
    await knex.raw('ALTER TABLE door_credential_acks ADD PRIMARY KEY (credential_id, controller_id, version, op)');
  },
  async down(knex) {
    await knex.raw("DELETE FROM door_credential_acks WHERE op = 'remove' AND (credential_id, controller_id, version) IN (SELECT credential_id, controller_id, version FROM door_credential_acks WHERE op = 'upsert')");
    await knex.raw('ALTER TABLE door_credential_acks DROP CONSTRAINT door_credential_acks_pkey');
    await knex.raw('ALTER TABLE door_credential_acks ADD PRIMARY KEY (credential_id, controller_id, version)');
  },
};
