// The shape of one numbered migration. Its own module, below both the list (migrate.ts) and the
// migrations that list imports, so neither imports the other back.
import type { Knex } from 'knex';

export interface Migration {
  readonly name: string;
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}
