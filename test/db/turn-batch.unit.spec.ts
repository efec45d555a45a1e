import { expect } from 'chai';
import { batchPerTurn } from '../../shared/db/turn-batch.js';

describe('batchPerTurn', () => {
  it('runs the calls of one event-loop turn as one batch and answers each in order', async () => {
    const batches: number[][] = [];
    const double = batchPerTurn(async (requests: number[]) => {
      batches.push(requests);
      return requests.map((n) => n * 2);
    });
    expect(await Promise.all([double(1), double(2), double(3)])).to.deep.equal([2, 4, 6]);
    expect(await double(4)).to.equal(8);
    expect(batches).to.deep.equal([[1, 2, 3], [4]]);
  });

  it('gathers calls made from different callbacks of the same turn', async () => {
    const batches: string[][] = [];
    const echo = batchPerTurn(async (requests: string[]) => {
      batches.push(requests);
      return requests;
    });
    const answers = await new Promise<string[]>((resolve) => {
      const pending: Array<Promise<string>> = [];
      // Two timers due together run in one turn's timer phase, before the check phase.
      setTimeout(() => pending.push(echo('a')), 0);
      setTimeout(() => {
        pending.push(echo('b'));
        void Promise.all(pending).then(resolve);
      }, 0);
    });
    expect(answers).to.deep.equal(['a', 'b']);
    expect(batches).to.deep.equal([['a', 'b']]);
  });

  it('rejects every call of a failed batch, and the next turn starts afresh', async () => {
    let fail = true;
    const run = batchPerTurn(async (requests: number[]) => {
      if (fail) throw new Error('statement failed');
      return requests;
    });
    const results = await Promise.allSettled([run(1), run(2)]);
    expect(results.map((r) => r.status)).to.deep.equal(['rejected', 'rejected']);
    fail = false;
    expect(await run(3)).to.equal(3);
  });
});
