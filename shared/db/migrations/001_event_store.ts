// The PostgreSQL event store's table (see shared/event-store/postgres-event-store.ts).
import type { Migration } from '../migration.js';

export const migration: Migration = {
  name: '001_event_store',
  async up(knex) {
    // transaction_id records the writing transaction so readers can order by commit visibility:
    // rows whose transaction_id is below the oldest running transaction (pg_snapshot_xmin) can
    // never be joined by a row that sorts before them. xid8 needs PostgreSQL 13+.
    await knex.raw(`
      CREATE TABLE events (
        global_position bigserial PRIMARY KEY,
        stream_name     text        NOT NULL,
        stream_position integer     NOT NULL CHECK (stream_position >= 0),
        transaction_id  xid8        NOT NULL DEFAULT pg_current_xact_id(),
        event_id        uuid        NOT NULL,
        type            text        NOT NULL,
        data            jsonb       NOT NULL,
        metadata        jsonb       NOT NULL,
        recorded_at     timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT events_stream_position_key UNIQUE (stream_name, stream_position),
        CONSTRAINT events_event_id_key UNIQUE (event_id)
      )`);
    // Global order for readAll, subscriptions and headPosition.
    await knex.raw('CREATE INDEX events_transaction_order_idx ON events (transaction_id, global_position)');
  },
  async down(knex) {
    await knex.raw('DROP TABLE IF EXISTS events');
  },
};
