// The door path's own tables (issue 4): the pass event forwarder's checkpoint, and the
// door-gateway's record of what each facility's controllers must hold and what they reported.
import type { Migration } from '../migration.js';

export const migration: Migration = {
  name: '004_door_path',
  async up(knex) {
    // One row per forwarder (reactor) name. Positions are xid8/bigint pairs (see event-store.ts),
    // kept as numeric(20) so every xid8 value fits.
    await knex.raw(`
      CREATE TABLE forwarder_checkpoints (
        name             text          PRIMARY KEY,
        commit_position  numeric(20,0) NOT NULL,
        prepare_position numeric(20,0) NOT NULL,
        events_forwarded bigint        NOT NULL DEFAULT 0,
        updated_at       timestamptz   NOT NULL DEFAULT now()
      )`);

    // The allow-list the door-gateway keeps in step with the controllers: the newest state of
    // every credential it has seen. Revoked and expired rows stay as tombstones so a late
    // duplicate of an older event is recognised by its version and changes nothing.
    await knex.raw(`
      CREATE TABLE door_credentials (
        credential_id text        PRIMARY KEY,
        facility_id   integer     NOT NULL,
        pass_id       bigint      NOT NULL,
        org_id        integer     NOT NULL,
        stream_name   text        NOT NULL,
        qr_hash       text        NOT NULL CHECK (qr_hash ~ '^[0-9a-f]{64}$'),
        valid_from    timestamptz NOT NULL,
        valid_until   timestamptz NOT NULL,
        version       integer     NOT NULL CHECK (version >= 0),
        state         text        NOT NULL CHECK (state IN ('active', 'revoked', 'expired')),
        event_id      uuid        NOT NULL,
        event_at      timestamptz NOT NULL,
        updated_at    timestamptz NOT NULL DEFAULT now()
      )`);
    // Start-up load and per-facility resyncs read only the active rows.
    await knex.raw("CREATE INDEX door_credentials_active_idx ON door_credentials (facility_id) WHERE state = 'active'");
    // Tombstones can be pruned once long expired.
    await knex.raw('CREATE INDEX door_credentials_valid_until_idx ON door_credentials (valid_until)');

    // Last reported status of each controller, for operators ("which door is offline or behind").
    await knex.raw(`
      CREATE TABLE door_controllers (
        facility_id      integer     NOT NULL,
        controller_id    text        NOT NULL,
        state            text        NOT NULL CHECK (state IN ('online', 'offline')),
        digest           text,
        credential_count integer,
        last_status_at   timestamptz NOT NULL,
        last_resync_at   timestamptz,
        resyncs          integer     NOT NULL DEFAULT 0,
        PRIMARY KEY (facility_id, controller_id)
      )`);

    // Each controller's acknowledgement of each credential change, with the time from the event
    // to the acknowledgement: the evidence that a revocation reached the doors.
    await knex.raw(`
      CREATE TABLE door_credential_acks (
        credential_id text        NOT NULL,
        controller_id text        NOT NULL,
        version       integer     NOT NULL,
        facility_id   integer     NOT NULL,
        op            text        NOT NULL CHECK (op IN ('upsert', 'remove')),
        event_at      timestamptz,
        acked_at      timestamptz NOT NULL,
        latency_ms    integer,
        PRIMARY KEY (credential_id, controller_id, version)
      )`);
    await knex.raw('CREATE INDEX door_credential_acks_acked_at_idx ON door_credential_acks (acked_at)');
  },
  async down(knex) {
    await knex.raw('DROP TABLE IF EXISTS door_credential_acks');
    await knex.raw('DROP TABLE IF EXISTS door_controllers');
    await knex.raw('DROP TABLE IF EXISTS door_credentials');
    await knex.raw('DROP TABLE IF EXISTS forwarder_checkpoints');
  },
};
