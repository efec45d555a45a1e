// Which event store a position belongs to. A checkpoint is a position in one store's log and
// means other events (or none) in another: checkpoints taken from the PostgreSQL log and then
// followed in EventStoreDB, or kept while the EventStoreDB volume was wiped, would silently skip
// or repeat events. So every store names itself (EventStore.identity()) and this database records
// the store its checkpoints count in (projections/checkpoint-store-identity.ts).
import type { Migration } from '../migration.js';

export const migration: Migration = {
  name: '012_event_store_identity',
  async up(knex) {
    // The PostgreSQL event store's own identity, beside its events table (written by the first
    // PostgresEventStore.identity()). Unused when the event store is EventStoreDB, which keeps its
    // identity in a stream of its own.
    await knex.raw(`
      CREATE TABLE event_store_identity (
        singleton  boolean     PRIMARY KEY DEFAULT true CHECK (singleton),
        id         uuid        NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    // The store the checkpoints of this database count in: projection_checkpoints and
    // forwarder_checkpoints. Recorded by the first checkpointed reader and by a rebuild that
    // adopts another store; every checkpointed reader refuses to start when it differs.
    await knex.raw(`
      CREATE TABLE checkpoint_event_store (
        singleton      boolean     PRIMARY KEY DEFAULT true CHECK (singleton),
        store_identity text        NOT NULL,
        recorded_at    timestamptz NOT NULL DEFAULT now()
      )`);
    // The store a rebuild in progress replays: it resumes only in that store. NULL for a rebuild
    // started before this migration (taken to be the recorded store's).
    await knex.raw('ALTER TABLE projection_rebuilds ADD COLUMN store_identity text');
  },
  async down(knex) {
    await knex.raw('ALTER TABLE projection_rebuilds DROP COLUMN IF EXISTS store_identity');
    await knex.raw('DROP TABLE IF EXISTS checkpoint_event_store');
    await knex.raw('DROP TABLE IF EXISTS event_store_identity');
  },
};
