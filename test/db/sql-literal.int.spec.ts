// SQL string literals for inlined values, read back by a real PostgreSQL (the embedded one, or DATABASE_URL's).
import { expect } from 'chai';
import pg from 'pg';
import { sqlLiteral } from '../../shared/db/sql-literal.js';
import { freshDatabase } from '../support/database.js';

describe('SQL string literals for inlined values (PostgreSQL)', () => {
  it('reads back as the text it was given', async () => {
    const client = new pg.Client({ connectionString: await freshDatabase('sql_literal') });
    await client.connect();
    try {
      const text = "a'b\\c \"d\" 🎟";
      const { rows } = await client.query(`SELECT ${sqlLiteral(text)}::text AS t`);
      expect(rows[0].t).to.equal(text);
    } finally {
      await client.end();
    }
  });
});
