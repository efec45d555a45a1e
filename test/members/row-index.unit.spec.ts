import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { hexDigest, RowIndex, textDigest } from '../../command-service/members/row-index.js';

describe('row index (the rows a member import has seen, by 64-bit digest)', () => {
  it('answers the first row a key was seen on, and nothing for a key never seen', () => {
    const index = new RowIndex();
    const ada = textDigest('HR-1');
    expect(index.get(ada)).to.equal(undefined);
    index.add(ada, 2);
    index.add(ada, 9); // a later row never replaces the first
    expect(index.get(ada)).to.equal(2);
    expect(index.get(textDigest('HR-2'))).to.equal(undefined);
  });

  it('keeps every key as it grows well past its first size', () => {
    const index = new RowIndex();
    const keys = Array.from({ length: 20_000 }, () => randomBytes(32).toString('hex'));
    keys.forEach((key, i) => index.add(hexDigest(key), i + 2));
    keys.forEach((key, i) => expect(index.get(hexDigest(key))).to.equal(i + 2));
    expect(index.get(hexDigest(randomBytes(32).toString('hex')))).to.equal(undefined);
  });

  it('refuses row 0, which marks a free slot', () => {
    expect(() => new RowIndex().add(textDigest('x'), 0)).to.throw(RangeError);
  });

  it('digests text by all of its characters, and a hex hash by its first 64 bits', () => {
    expect(textDigest('HR-12')).to.deep.equal(textDigest('HR-12'));
    expect(textDigest('HR-12')).not.to.deep.equal(textDigest('HR-21'));
    expect(textDigest('Ünïcødé')).not.to.deep.equal(textDigest('Unicode'));
    expect(hexDigest('0123456789abcdef' + 'f'.repeat(48))).to.deep.equal({ hi: 0x01234567, lo: 0x89abcdef });
  });
});
