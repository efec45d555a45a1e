// The held points of the per-address failure budget (failure-budget.ts), over the in-memory store:
// correct requests reuse the points this instance holds instead of taking and giving back one
// each, failures spend theirs for good, and the budget still bounds what is checked at once.
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { RateLimitedError } from '../../../shared/errors.js';
import { createLogger } from '../../../shared/logger.js';
import { ORG_API_RATE_LIMIT, RateLimiter, type RateLimitPolicy } from '../../../shared/http/rate-limit.js';
import { memoryRateLimitStore } from '../../../shared/http/rate-limit-store.js';
import { BUSY_LINGER_MS, HeldFailurePoints } from '../../../command-service/oauth/failure-budget.js';

/** Past the moment points are held after an address's last request, and the give-back's own turn. */
const quiet = () => sleep(BUSY_LINGER_MS + 30);

const log = createLogger('silent', 'test');
const headers = { set: () => undefined };

function budget(points: number) {
  const policy: RateLimitPolicy = { ...ORG_API_RATE_LIMIT, points, windowSeconds: 60, abuseThreshold: points, escalation: 'exhaustion' };
  const store = memoryRateLimitStore();
  const limiter = new RateLimiter('failures', policy, store);
  // The same counter the limiter counts in (one per name and policy in a store).
  const counter = store.counter({ keyPrefix: 'failures:req', points, durationSeconds: 60 });
  const counted = async (key: string) => (await counter.get(key))?.consumedPoints ?? 0;
  return { limiter, points: new HeldFailurePoints(limiter), counted };
}

async function refusal(promise: Promise<unknown>): Promise<RateLimitedError> {
  try {
    await promise;
  } catch (error) {
    expect(error).to.be.instanceOf(RateLimitedError);
    return error as RateLimitedError;
  }
  throw new Error('expected a 429');
}

describe('per-address failure budget: held points', () => {
  it('counts each request in flight once, and gives every point back when the address goes quiet', async () => {
    const { points, counted } = budget(10);
    const held = await Promise.all(Array.from({ length: 4 }, () => points.acquire(headers, 'a')));
    expect(await counted('a')).to.equal(4);
    for (const holding of held) points.release('a', holding, false, log);
    await quiet();
    expect(await counted('a')).to.equal(0);
    expect(points.size).to.equal(0);
  });

  it('lets the next correct request use a point a finished one left, without taking another', async () => {
    const { points, counted } = budget(10);
    const first = await points.acquire(headers, 'a');
    const second = await points.acquire(headers, 'a');
    points.release('a', first, false, log);
    // Before the end of the turn: the point `first` held is taken up again.
    const third = await points.acquire(headers, 'a');
    expect(third).to.equal(first);
    expect(await counted('a')).to.equal(2);
    points.release('a', second, false, log);
    points.release('a', third, false, log);
    await quiet();
    expect(await counted('a')).to.equal(0);
  });

  it('gives the point of a lone request back at once, and keeps a busy address\'s points for its next requests a moment longer', async () => {
    const { points, counted } = budget(10);
    points.release('lone', await points.acquire(headers, 'lone'), false, log);
    await sleep(10);
    expect(await counted('lone')).to.equal(0);

    const busy = await Promise.all([points.acquire(headers, 'busy'), points.acquire(headers, 'busy')]);
    for (const holding of busy) points.release('busy', holding, false, log);
    await sleep(2);
    const next = await points.acquire(headers, 'busy');
    expect(next).to.equal(busy[0]);
    expect(await counted('busy')).to.equal(2);
    points.release('busy', next, false, log);
    await quiet();
    expect(await counted('busy')).to.equal(0);
  });

  it('keeps the point of a failure counted, so failures spend the budget and the one past it locks out', async () => {
    const { points, counted } = budget(3);
    for (let i = 0; i < 3; i++) points.release('a', await points.acquire(headers, 'a'), true, log);
    await quiet();
    expect(await counted('a')).to.equal(3);
    const locked = await refusal(points.acquire(headers, 'a', {}));
    expect(locked.retryAfterSeconds).to.equal(900);
    // Another address has its own budget.
    expect((await points.acquire(headers, 'b')).held).to.equal(1);
  });

  it('checks no more than the budget at once, however many arrive together', async () => {
    const { points } = budget(5);
    const outcomes = await Promise.allSettled(Array.from({ length: 12 }, () => points.acquire(headers, 'a')));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).to.have.length(5);
    expect(outcomes.filter((o) => o.status === 'rejected').every((o) => (o as PromiseRejectedResult).reason instanceof RateLimitedError)).to.equal(true);
  });

  it('does not shorten a lockout by giving back the points held when it began', async () => {
    const { points, counted } = budget(3);
    // Two correct requests in flight hold two points; then the third point and one past it fail.
    const inFlight = [await points.acquire(headers, 'a'), await points.acquire(headers, 'a')];
    points.release('a', await points.acquire(headers, 'a'), true, log);
    await refusal(points.acquire(headers, 'a'));
    for (const holding of inFlight) points.release('a', holding, false, log);
    await quiet();
    expect(await counted('a')).to.be.greaterThan(3);
    const still = await refusal(points.acquire(headers, 'a'));
    expect(still.retryAfterSeconds).to.be.greaterThan(890);
  });
});
