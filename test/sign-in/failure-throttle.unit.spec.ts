import { expect } from 'chai';
import { RateLimitedError } from '../../shared/errors.js';
import { FailureThrottle, takeAttempts } from '../../shared/sign-in/failure-throttle.js';

async function refusal(attempt: Promise<unknown>): Promise<RateLimitedError> {
  const error = await attempt.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error, 'a refusal').to.be.instanceOf(RateLimitedError);
  return error as RateLimitedError;
}

describe('failure throttle', () => {
  it('takes attempts until a key has used up its failures, then refuses them (429 with the time left)', async () => {
    const throttle = new FailureThrottle('t1', { failures: 3, windowSeconds: 60 });
    for (let i = 0; i < 3; i++) await throttle.take('a');
    const refused = await refusal(throttle.take('a'));
    expect(refused.status).to.equal(429);
    expect(refused.retryAfterSeconds).to.be.within(1, 60);
    expect(refused.policy).to.equal('t1');
    await throttle.take('b'); // another key has its own attempts
  });

  it('gives an attempt back when its check succeeded: only failures count', async () => {
    const throttle = new FailureThrottle('t2', { failures: 1, windowSeconds: 60 });
    for (let i = 0; i < 5; i++) {
      await throttle.take('a');
      await throttle.giveBack('a');
    }
    await throttle.take('a');
    await refusal(throttle.take('a'));
  });

  it('lets exactly `failures` of 40 simultaneous attempts through, whatever the concurrency', async () => {
    const throttle = new FailureThrottle('t3', { failures: 10, windowSeconds: 60 });
    const outcomes = await Promise.allSettled(Array.from({ length: 40 }, () => throttle.take('victim')));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).to.have.length(10);
    for (const o of outcomes.filter((o) => o.status === 'rejected')) expect((o as PromiseRejectedResult).reason).to.be.instanceOf(RateLimitedError);
  });

  it('takes an attempt under every key or none: a refusal gives back what the other keys took', async () => {
    const byIp = new FailureThrottle('t4-ip', { failures: 5, windowSeconds: 60 });
    const byAccount = new FailureThrottle('t4-account', { failures: 1, windowSeconds: 60 });
    await takeAttempts([[byIp, 'ip'], [byAccount, 'acct']]);
    await refusal(takeAttempts([[byIp, 'ip'], [byAccount, 'acct']]));
    // The refused request was not checked, so the address keeps 4 attempts (5 - 1 failure).
    for (let i = 0; i < 4; i++) await byIp.take('ip');
    await refusal(byIp.take('ip'));
  });

  it('gives every attempt back when the check succeeded', async () => {
    const byIp = new FailureThrottle('t5-ip', { failures: 1, windowSeconds: 60 });
    const byAccount = new FailureThrottle('t5-account', { failures: 1, windowSeconds: 60 });
    for (let i = 0; i < 3; i++) await (await takeAttempts([[byIp, 'ip'], [byAccount, 'acct']])).succeeded();
    await byIp.take('ip');
    await byAccount.take('acct');
  });
});
