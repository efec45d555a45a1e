// Migrations are numbered modules listed here (so they load the same from TypeScript and from
// the build) and never edited once landed.
import type { Knex } from 'knex';
import type { Migration } from './migration.js';
import { holdSessionLock, SESSION_LOCKS } from './session-lock.js';

const migrations: Array<() => Promise<Migration>> = [
  () => import('./migrations/001_event_store.js').then((m) => m.migration),
  () => import('./migrations/002_subject_keys_and_ids.js').then((m) => m.migration),
  () => import('./migrations/003_projections.js').then((m) => m.migration),
  () => import('./migrations/004_door_path.js').then((m) => m.migration),
  () => import('./migrations/005_oauth_signing_keys.js').then((m) => m.migration),
  () => import('./migrations/006_invitation_ids.js').then((m) => m.migration),
  () => import('./migrations/007_door_ack_ops.js').then((m) => m.migration),
  () => import('./migrations/008_passkey_ceremonies.js').then((m) => m.migration),
  () => import('./migrations/009_pass_delivery.js').then((m) => m.migration),
  () => import('./migrations/010_wrapped_subject_keys.js').then((m) => m.migration),
  () => import('./migrations/012_event_store_identity.js').then((m) => m.migration),
  () => import('./migrations/013_rate_limit_counters.js').then((m) => m.migration),
  () => import('./migrations/014_pass_delivery_jobs_retention.js').then((m) => m.migration),
  () => import('./migrations/015_invitation_mail_claims.js').then((m) => m.migration),
  () => import('./migrations/016_audit_tree.js').then((m) => m.migration),
  () => import('./migrations/017_api_key_last_use.js').then((m) => m.migration),
];

class ListedMigrations implements Knex.MigrationSource<Migration> {
  constructor(private readonly loaded: Migration[]) {}
  async getMigrations(): Promise<Migration[]> {
    return this.loaded;
  }
  getMigrationName(migration: Migration): string {
    return migration.name;
  }
  async getMigration(migration: Migration): Promise<Knex.Migration> {
    return migration;
  }
}

/**
 * Several processes may start on one fresh database at once (docker-compose's services). knex's
 * own lock is a row in a table it creates first, so racing migrators fail with `relation
 * "knex_migrations_lock" already exists` or "Migration table is already locked". A PostgreSQL
 * advisory lock, held on a connection of its own (the pool may have only one), makes them wait
 * their turn instead; the later ones find nothing left to do. PostgreSQL releases it if this
 * process dies.
 */
export async function migrateToLatest(knex: Knex): Promise<void> {
  const loaded = await Promise.all(migrations.map((load) => load()));
  // A lock lost mid-way (a server restart) needs no handling here: the migration's own queries fail.
  const release = await holdSessionLock(knex, SESSION_LOCKS.migrations);
  try {
    await knex.migrate.latest({ migrationSource: new ListedMigrations(loaded), tableName: 'knex_migrations' });
  } finally {
    await release();
  }
}
