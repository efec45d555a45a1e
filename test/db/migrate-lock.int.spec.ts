import { expect } from 'chai';
import { createKnex, type Knex } from '../../shared/db/knex.js';
import { migrateToLatest } from '../../shared/db/migrate.js';
import { freshDatabase } from '../support/database.js';

describe('migrateToLatest, run by several processes at once', function () {
  this.timeout(60_000);

  // As docker-compose starts the command service, the projections and the door gateway together
  // on a fresh database: each migrator has its own pool (one connection, the tightest case).
  it('lets every migrator succeed on a fresh database, each migration applied once', async () => {
    for (let round = 0; round < 3; round++) {
      const url = await freshDatabase('migrate_lock');
      const knexes: Knex[] = Array.from({ length: 6 }, () => createKnex(url, { max: 1 }));
      try {
        const results = await Promise.allSettled(knexes.map((knex) => migrateToLatest(knex)));
        const failures = results.flatMap((r) => (r.status === 'rejected' ? [String((r.reason as Error)?.message ?? r.reason)] : []));
        expect(failures, `round ${round}`).to.deep.equal([]);
        const applied = await knexes[0]!('knex_migrations').select('name');
        const names = applied.map((r: { name: string }) => r.name);
        expect(new Set(names).size).to.equal(names.length);
        expect(names).to.include('001_event_store');
      } finally {
        await Promise.all(knexes.map((knex) => knex.destroy()));
      }
    }
  });
});
