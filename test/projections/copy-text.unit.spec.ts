import { expect } from 'chai';
import { copyField, copyText } from '../../projections/copy-text.js';
import type { StoredRow } from '../../projections/projection.js';

describe('COPY text', () => {
  it('writes NULL as \\N and escapes backslash, tab, newline and carriage return', () => {
    expect(copyField(null)).to.equal('\\N');
    expect(copyField(undefined)).to.equal('\\N');
    expect(copyField('plain')).to.equal('plain');
    expect(copyField('a\\b\tc\nd\re')).to.equal('a\\\\b\\tc\\nd\\re');
    expect(copyField('\\N')).to.equal('\\\\N'); // the text "\\N", not a NULL
  });

  it('writes numbers, booleans and dates as PostgreSQL reads them', () => {
    expect(copyField(42)).to.equal('42');
    expect(copyField(9007199254740993n)).to.equal('9007199254740993');
    expect(copyField(true)).to.equal('t');
    expect(copyField(false)).to.equal('f');
    expect(copyField(new Date('2025-03-20T10:00:00.000Z'))).to.equal('2025-03-20T10:00:00.000Z');
  });

  it('writes arrays as literals with every element quoted, so none reads as NULL or splits at a comma', () => {
    expect(copyField([])).to.equal('{}');
    expect(copyField(['org:passes:read', '10.0.0.0/8'])).to.equal('{"org:passes:read","10.0.0.0/8"}');
    expect(copyField(['NULL', 'a,b', 'say "hi"', 'back\\slash', null])).to.equal('{"NULL","a,b","say \\\\"hi\\\\"","back\\\\\\\\slash",NULL}');
  });

  it('writes objects as JSON, escaped like any text', () => {
    expect(copyField({ a: 'x\ty' })).to.equal('{"a":"x\\\\ty"}');
  });

  it('writes one line per row in the given column order, a missing property as NULL', () => {
    const rows = [
      { id: 1, name: 'a', _commit: '5', _prepare: '6' },
      { id: 2, _commit: '7', _prepare: '8' },
    ] as StoredRow[];
    expect(copyText(['id', 'name', '_commit', '_prepare'], rows)).to.equal('1\ta\t5\t6\n2\t\\N\t7\t8\n');
  });
});
