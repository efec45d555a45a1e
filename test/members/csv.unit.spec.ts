import { expect } from 'chai';
import { CsvError, CsvLineReader, parseCsv } from '../../shared/domain/csv.js';

describe('CSV reader (RFC 4180)', () => {
  it('splits plain fields, keeping empty ones (also a last empty one)', () => {
    expect(parseCsv('a,b,c\n1,,3\n,,')).to.deep.equal([['a', 'b', 'c'], ['1', '', '3'], ['', '', '']]);
  });

  it('reads quoted fields with commas, doubled quotes and line breaks', () => {
    expect(parseCsv('"Smith, John","say ""hi""","two\nlines",""')).to.deep.equal([['Smith, John', 'say "hi"', 'two\nlines', '']]);
    expect(parseCsv('"a\r\n\r\nb",c')).to.deep.equal([['a\n\nb', 'c']]);
  });

  it('drops a byte order mark, takes CRLF, skips blank lines between records', () => {
    expect(parseCsv('\uFEFFfirst_name,last_name\r\nAda,Lovelace\r\n\r\nAlan,Turing\r\n')).to.deep.equal([
      ['first_name', 'last_name'],
      ['Ada', 'Lovelace'],
      ['Alan', 'Turing'],
    ]);
  });

  it('keeps a quote inside an unquoted field as a character', () => {
    expect(parseCsv('5" screen,x')).to.deep.equal([['5" screen', 'x']]);
  });

  it('numbers records by the line they start on', () => {
    const reader = new CsvLineReader();
    const lines = ['h1,h2', '', '"a', 'b",c', 'd,e'];
    const records = lines.map((l) => reader.push(l)).filter((r) => r !== null);
    expect(records.map((r) => r.line)).to.deep.equal([1, 3, 5]);
    expect(records[1]!.fields).to.deep.equal(['a\nb', 'c']);
  });

  it('refuses text after a closing quote, naming the row, and reads on with the next line', () => {
    const reader = new CsvLineReader();
    reader.push('a,b');
    expect(() => reader.push('"x"y,z')).to.throw(CsvError, /^row 2: text after a closing quote/);
    expect(reader.push('1,2')).to.deep.equal({ line: 3, fields: ['1', '2'] });
  });

  it('refuses a file that ends inside quotes', () => {
    expect(() => parseCsv('a,b\n"open,b')).to.throw(CsvError, /row 2: the file ends inside a quoted field/);
  });
});
