import { expect } from 'chai';
import pg from 'pg';
import { sqlLiteral } from '../../shared/db/sql-literal.js';

describe('SQL string literals for inlined values', () => {
  it("is pg.escapeLiteral's literal, quotes and backslashes included", () => {
    for (const text of ['', 'plain', "O'Brien", "''", 'back\\slash', "both \\ and '", '{"name":"Ann \\"A\\" O\'Neil"}', 'ünïcødé 🎟', 'line\nbreak\ttab']) {
      expect(sqlLiteral(text), text).to.equal(pg.escapeLiteral(text));
    }
  });

  it('reads back as the text it was given', async function () {
    if (!process.env.DATABASE_URL) this.skip();
    const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
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
