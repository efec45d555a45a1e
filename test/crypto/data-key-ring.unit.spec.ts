// The data KEK ring (shared/crypto/data-key-ring.ts): wraps under the current KEK, unwraps under
// any KEK it holds, and refuses loudly (naming the kek id, never key bytes) everything else.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { DataKeyRing, DataKeyRingError, dataKekId } from '../../shared/crypto/data-key-ring.js';

function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a throw');
}

describe('DataKeyRing', () => {
  const kek = Buffer.alloc(32, 1);
  const other = Buffer.alloc(32, 2);
  const dataKey = randomBytes(32);

  it('wraps under the current KEK and unwraps to the same key, never showing it in the clear', () => {
    const ring = new DataKeyRing(kek);
    const { kekId, wrapped } = ring.wrap(dataKey);
    expect(kekId).to.equal(dataKekId(kek)).and.to.equal(ring.currentKekId).and.to.match(/^[0-9a-f]{16}$/);
    expect(wrapped.length).to.equal(12 + 32 + 16);
    expect(wrapped.includes(dataKey)).to.equal(false);
    expect(ring.unwrap(kekId, wrapped).equals(dataKey)).to.equal(true);
  });

  it('wraps the same key differently each time (random IV)', () => {
    const ring = new DataKeyRing(kek);
    expect(ring.wrap(dataKey).wrapped.equals(ring.wrap(dataKey).wrapped)).to.equal(false);
  });

  it('names a KEK by an id that depends on the key alone', () => {
    expect(dataKekId(kek)).to.equal(dataKekId(Buffer.alloc(32, 1)));
    expect(dataKekId(kek)).to.not.equal(dataKekId(other));
  });

  it('unwraps under a previous KEK and wraps only under the current one', () => {
    const old = new DataKeyRing(other).wrap(dataKey);
    const ring = new DataKeyRing(kek, [other]);
    expect(ring.unwrap(old.kekId, old.wrapped).equals(dataKey)).to.equal(true);
    expect(ring.wrap(dataKey).kekId).to.equal(dataKekId(kek));
    expect(ring.kekIds).to.deep.equal([dataKekId(kek), dataKekId(other)]);
    expect(ring.has(dataKekId(other))).to.equal(true);
  });

  it('refuses an unknown kek id, naming it', () => {
    const foreign = new DataKeyRing(other).wrap(dataKey);
    const error = thrown(() => new DataKeyRing(kek).unwrap(foreign.kekId, foreign.wrapped));
    expect(error).to.be.instanceOf(DataKeyRingError);
    expect(error.message).to.include(foreign.kekId);
  });

  it('binds the kek id: a wrapped key relabelled with another KEK of the ring does not open', () => {
    // Both KEKs are held, so only the AAD (and the key) tells the label is false.
    const ring = new DataKeyRing(kek, [other]);
    const { wrapped } = ring.wrap(dataKey);
    const error = thrown(() => ring.unwrap(dataKekId(other), wrapped));
    expect(error).to.be.instanceOf(DataKeyRingError);
    expect(error.message).to.include(dataKekId(other)).and.to.include('failed authentication');
  });

  it('refuses a tampered or truncated wrapped key, never returning a garbled key', () => {
    const ring = new DataKeyRing(kek);
    const { kekId, wrapped } = ring.wrap(dataKey);
    for (const at of [0, 12, 30, wrapped.length - 1]) {
      const tampered = Buffer.from(wrapped);
      tampered[at] = tampered[at]! ^ 0x01;
      const error = thrown(() => ring.unwrap(kekId, tampered));
      expect(error, `byte ${at}`).to.be.instanceOf(DataKeyRingError);
      expect(error.message).to.include(kekId).and.not.to.include(dataKey.toString('hex'));
    }
    expect(thrown(() => ring.unwrap(kekId, wrapped.subarray(0, 28)))).to.be.instanceOf(DataKeyRingError);
    expect(thrown(() => ring.unwrap(kekId, wrapped.subarray(0, wrapped.length - 1)))).to.be.instanceOf(DataKeyRingError);
  });

  it('refuses a KEK that is not 32 bytes, without echoing it', () => {
    const short = Buffer.alloc(16, 9);
    const error = thrown(() => new DataKeyRing(short));
    expect(error).to.be.instanceOf(DataKeyRingError);
    expect(error.message).not.to.include(short.toString('hex'));
    expect(thrown(() => new DataKeyRing(kek, [short]))).to.be.instanceOf(DataKeyRingError);
  });
});
