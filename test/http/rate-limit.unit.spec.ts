import { expect } from 'chai';
import { RateLimiter, ORG_API_RATE_LIMIT, type LockoutNotice, type TakeOptions } from '../../shared/http/rate-limit.js';
import { RateLimitedError } from '../../shared/errors.js';

async function refused(limiter: RateLimiter, key: string, options: ((n: LockoutNotice) => void) | TakeOptions = {}): Promise<RateLimitedError> {
  try {
    await limiter.take(key, typeof options === 'function' ? { onLockout: options } : options);
  } catch (error) {
    expect(error).to.be.instanceOf(RateLimitedError);
    return error as RateLimitedError;
  }
  throw new Error('expected a refusal');
}

describe('rate limiter', () => {
  it('has the spec organization API policy: 300 per minute, lockouts of 15 min, 1 h, 24 h', () => {
    expect(ORG_API_RATE_LIMIT.points).to.equal(300);
    expect(ORG_API_RATE_LIMIT.windowSeconds).to.equal(60);
    expect(ORG_API_RATE_LIMIT.lockoutSeconds).to.deep.equal([900, 3600, 86400]);
  });

  it('allows `points` per window and source, then refuses with the time left in the window', async () => {
    const limiter = new RateLimiter('t1', { ...ORG_API_RATE_LIMIT, points: 3 });
    for (let i = 0; i < 3; i++) expect((await limiter.take('a')).remaining).to.equal(2 - i);
    const error = await refused(limiter, 'a');
    expect(error.retryAfterSeconds).to.be.within(1, 60);
    expect(error.limit).to.equal(3);
    expect(error.windowSeconds).to.equal(60);
    expect(error.policy).to.equal('t1');
    expect((await limiter.take('b')).remaining).to.equal(2); // another source has its own bucket
  });

  it('locks out a source that keeps sending while refused, escalating 15 min -> 1 h -> 24 h -> 24 h', async () => {
    const limiter = new RateLimiter('t2', { ...ORG_API_RATE_LIMIT, points: 1, abuseThreshold: 2 });
    const notices: LockoutNotice[] = [];
    await limiter.take('x');
    const lengths: number[] = [];
    const refusalsPerLockout: number[] = [];
    for (let level = 1; level <= 4; level++) {
      let refusals = 0;
      let last: RateLimitedError | null = null;
      while (notices.length < level && refusals < 10) {
        last = await refused(limiter, 'x', (n) => notices.push(n));
        refusals++;
      }
      refusalsPerLockout.push(refusals);
      lengths.push(last!.retryAfterSeconds);
      // While locked out, every answer says how long the lockout still runs.
      const during = await refused(limiter, 'x', (n) => notices.push(n));
      expect(during.retryAfterSeconds).to.be.greaterThan(last!.retryAfterSeconds - 5);
    }
    // Two refusals are tolerated, the third within the abuse window locks out.
    expect(refusalsPerLockout).to.deep.equal([3, 2, 2, 2]);
    expect(lengths).to.deep.equal([900, 3600, 86400, 86400]);
    expect(notices.map((n) => n.level)).to.deep.equal([1, 2, 3, 4]);
  });

  it('aims lockouts at the lockKey: the pair that hammers stays locked, the bucket serves others after its window', async () => {
    const limiter = new RateLimiter('t3', { ...ORG_API_RATE_LIMIT, points: 2, windowSeconds: 1, abuseThreshold: 2 });
    const appA = { lockKey: 'user:1:client:A' };
    const appB = { lockKey: 'user:1:client:B' };
    await limiter.take('user:1', appA);
    await limiter.take('user:1', appA);
    const notices: LockoutNotice[] = [];
    for (let i = 0; i < 3; i++) await limiter.take('user:1', { ...appA, onLockout: (n) => notices.push(n) }).catch(() => undefined);
    expect(notices.map((n) => [n.key, n.seconds])).to.deep.equal([['user:1:client:A', 900]]);
    // The user's bucket is spent for this window, for every app of theirs...
    expect((await refused(limiter, 'user:1', appB)).retryAfterSeconds).to.be.at.most(1);
    // ...and once the window has passed, app B is served while app A stays locked out.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await limiter.take('user:1', appB)).remaining).to.equal(1);
    expect((await refused(limiter, 'user:1', appA)).retryAfterSeconds).to.be.within(895, 900);
  });
});
