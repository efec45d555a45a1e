// Bookkeeping of the projection runner (projections/runner.ts): one checkpoint per projection,
// naming the generation table its read-model view points at, and the state of blue/green
// rebuilds. The generation tables and views themselves are created by the runner from each
// projection's own DDL, since they change with the projection's version, and migrations never do.
import type { Migration } from '../migration.js';

export const migration: Migration = {
  name: '003_projections',
  async up(knex) {
    // Trigram indexes for the pass list's search (pg_trgm is a trusted extension from PostgreSQL 13).
    await knex.raw('CREATE EXTENSION IF NOT EXISTS pg_trgm');
    // Positions are numeric: EventStoreDB's commit and prepare positions are unsigned 64-bit.
    await knex.raw(`
      CREATE TABLE projection_checkpoints (
        name             text        PRIMARY KEY,
        generation       integer     NOT NULL,
        table_name       text        NOT NULL,
        version          integer     NOT NULL,
        position_commit  numeric     NOT NULL,
        position_prepare numeric     NOT NULL,
        -- Why the projection stopped (a poison event), until a runner passes that point.
        error            text,
        updated_at       timestamptz NOT NULL DEFAULT now()
      )`);
    // A rebuild in progress: the next generation table and how far its replay has got, so an
    // interrupted rebuild resumes instead of starting over.
    await knex.raw(`
      CREATE TABLE projection_rebuilds (
        name             text        PRIMARY KEY,
        generation       integer     NOT NULL,
        table_name       text        NOT NULL,
        version          integer     NOT NULL,
        position_commit  numeric     NOT NULL,
        position_prepare numeric     NOT NULL,
        -- Secondary indexes are built once the replay has caught up (faster than row by row).
        indexed          boolean     NOT NULL DEFAULT false,
        started_at       timestamptz NOT NULL DEFAULT now(),
        updated_at       timestamptz NOT NULL DEFAULT now()
      )`);
  },
  async down(knex) {
    await knex.raw('DROP TABLE IF EXISTS projection_rebuilds');
    await knex.raw('DROP TABLE IF EXISTS projection_checkpoints');
  },
};
