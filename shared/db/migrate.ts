// Migrations are numbered modules listed here (so they load the same from TypeScript and from
// the build) and never edited once landed.
import type { Knex } from 'knex';

export interface Migration {
  readonly name: string;
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

const migrations: Array<() => Promise<Migration>> = [
  () => import('./migrations/001_event_store.js').then((m) => m.migration),
  () => import('./migrations/002_subject_keys_and_ids.js').then((m) => m.migration),
  () => import('./migrations/003_projections.js').then((m) => m.migration),
  () => import('./migrations/004_door_path.js').then((m) => m.migration),
  () => import('./migrations/005_oauth_signing_keys.js').then((m) => m.migration),
  () => import('./migrations/006_invitation_ids.js').then((m) => m.migration),
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

export async function migrateToLatest(knex: Knex): Promise<void> {
  const loaded = await Promise.all(migrations.map((load) => load()));
  await knex.migrate.latest({ migrationSource: new ListedMigrations(loaded), tableName: 'knex_migrations' });
}
