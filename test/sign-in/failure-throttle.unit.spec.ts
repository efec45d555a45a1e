import { expect } from 'chai';
import { RateLimitedError } from '../../shared/errors.js';
import { FailureThrottle } from '../../shared/sign-in/failure-throttle.js';

describe('failure throttle', () => {
  it('allows attempts until a key has used up its failures, then refuses them (429)', async () => {
    const throttle = new FailureThrottle('t1', { failures: 3, windowSeconds: 60 });
    for (let i = 0; i < 3; i++) {
      await throttle.check('a');
      await throttle.fail('a');
    }
    let refused: unknown;
    try {
      await throttle.check('a');
    } catch (error) {
      refused = error;
    }
    expect(refused).to.be.instanceOf(RateLimitedError);
    expect((refused as RateLimitedError).status).to.equal(429);
    expect((refused as RateLimitedError).retryAfterSeconds).to.be.within(1, 60);
  });

  it('counts keys apart, and checking alone never uses an attempt up', async () => {
    const throttle = new FailureThrottle('t2', { failures: 1, windowSeconds: 60 });
    for (let i = 0; i < 5; i++) await throttle.check('b');
    await throttle.fail('a');
    await throttle.check('b');
    let refused = false;
    await throttle.check('a').catch(() => (refused = true));
    expect(refused).to.equal(true);
  });
});
