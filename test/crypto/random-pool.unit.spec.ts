import { expect } from 'chai';
import { pooledRandomBytes } from '../../shared/crypto/random-pool.js';

describe('pooled random bytes', () => {
  it('hands out buffers of the size asked for, never the same bytes twice', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2_000; i++) {
      const bytes = pooledRandomBytes(12 + (i % 21));
      expect(bytes.length).to.equal(12 + (i % 21));
      const hex = bytes.toString('hex');
      expect(seen.has(hex)).to.equal(false);
      seen.add(hex);
    }
  });

  it('gives each caller a buffer of its own, which a later draw leaves alone', () => {
    const key = pooledRandomBytes(32);
    const copy = Buffer.from(key);
    for (let i = 0; i < 1_000; i++) pooledRandomBytes(32);
    expect(key.equals(copy)).to.equal(true);
    expect(key.buffer.byteLength).to.be.lessThan(16 * 1024); // not a view on a pool kept alive by it
  });

  it('serves sizes larger than a pool share directly', () => {
    expect(pooledRandomBytes(5000)).to.have.length(5000);
  });
});
