import { expect } from 'chai';
import pg from 'pg';
import { sqlLiteral } from '../../shared/db/sql-literal.js';

describe('SQL string literals for inlined values', () => {
  it("is pg.escapeLiteral's literal, quotes and backslashes included", () => {
    for (const text of ['', 'plain', "O'Brien", "''", 'back\\slash', "both \\ and '", '{"name":"Ann \\"A\\" O\'Neil"}', 'ünïcødé 🎟', 'line\nbreak\ttab']) {
      expect(sqlLiteral(text), text).to.equal(pg.escapeLiteral(text));
    }
  });
});
