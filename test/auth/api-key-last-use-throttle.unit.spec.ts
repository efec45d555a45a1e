import { expect } from 'chai';
import { LAST_USE_WRITE_INTERVAL_MS, LastUseThrottle } from '../../shared/auth/api-key-last-use.js';

describe('API key last-use throttle', () => {
  const t0 = Date.parse('2026-03-01T12:00:00.000Z');

  it('writes a key the first time, then at most once per minute', () => {
    const throttle = new LastUseThrottle();
    expect(LAST_USE_WRITE_INTERVAL_MS).to.equal(60_000);
    expect(throttle.shouldWrite('key_a', t0)).to.equal(true);
    expect(throttle.shouldWrite('key_a', t0)).to.equal(false);
    expect(throttle.shouldWrite('key_a', t0 + 59_999)).to.equal(false);
    expect(throttle.shouldWrite('key_a', t0 + 60_000)).to.equal(true);
    // The minute counts from the last write, not the last use.
    expect(throttle.shouldWrite('key_a', t0 + 60_000 + 30_000)).to.equal(false);
    expect(throttle.shouldWrite('key_a', t0 + 120_000)).to.equal(true);
  });

  it('throttles each key on its own', () => {
    const throttle = new LastUseThrottle();
    expect(throttle.shouldWrite('key_a', t0)).to.equal(true);
    expect(throttle.shouldWrite('key_b', t0 + 1)).to.equal(true);
    expect(throttle.shouldWrite('key_a', t0 + 2)).to.equal(false);
    expect(throttle.shouldWrite('key_b', t0 + 3)).to.equal(false);
  });

  it('writes 1,000 uses of one key in one minute once', () => {
    const throttle = new LastUseThrottle();
    let writes = 0;
    for (let i = 0; i < 1000; i++) if (throttle.shouldWrite('key_a', t0 + i * 59)) writes++;
    expect(writes).to.equal(1);
  });

  it('writes again when the clock went back (a write is never held off indefinitely)', () => {
    const throttle = new LastUseThrottle();
    expect(throttle.shouldWrite('key_a', t0)).to.equal(true);
    expect(throttle.shouldWrite('key_a', t0 - 5_000)).to.equal(true);
    expect(throttle.shouldWrite('key_a', t0 - 4_000)).to.equal(false);
  });

  it('remembers at most its bound of keys, forgetting the least recently written first', () => {
    const throttle = new LastUseThrottle(60_000, 3);
    for (const key of ['key_a', 'key_b', 'key_c']) expect(throttle.shouldWrite(key, t0)).to.equal(true);
    expect(throttle.shouldWrite('key_d', t0 + 1)).to.equal(true); // forgets key_a
    expect(throttle.size).to.equal(3);
    expect(throttle.shouldWrite('key_b', t0 + 2)).to.equal(false);
    expect(throttle.shouldWrite('key_a', t0 + 3)).to.equal(true); // forgotten: written once more, forgets key_b
    expect(throttle.shouldWrite('key_c', t0 + 4)).to.equal(false);
    expect(throttle.size).to.equal(3);
  });
});
