import { expect } from 'chai';
import pg from 'pg';
import { freshDatabase } from '../support/database.js';

describe('test database harness', () => {
  it('creates an isolated, empty database that accepts queries', async () => {
    const url = await freshDatabase('smoke');
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<{ n: string }>("select count(*)::text as n from pg_tables where schemaname = 'public'");
      expect(rows[0]?.n).to.equal('0');
      const xid = await client.query<{ ok: boolean }>('select pg_current_xact_id() is not null as ok');
      expect(xid.rows[0]?.ok).to.equal(true);
    } finally {
      await client.end();
    }
  });
});
