import { expect } from 'chai';
import { waitUntilReady, type ReadinessCheck } from '../../shared/http/readiness.js';

describe('waiting for readiness before serving', () => {
  it('returns once every part passes at the same time (a part that connects a moment later is waited for)', async () => {
    let asked = 0;
    const late: ReadinessCheck = {
      name: 'mqtt',
      check: async () => {
        asked += 1;
        if (asked < 3) throw new Error('not connected yet');
      },
    };
    const failing = await waitUntilReady([{ name: 'database', check: async () => undefined }, late], 60_000);
    expect(failing).to.deep.equal([]);
    expect(asked).to.equal(3);
  });

  it('gives up when its time is over and names the parts still failing', async () => {
    const failing = await waitUntilReady(
      [
        { name: 'database', check: async () => undefined },
        { name: 'kafka', check: () => Promise.reject(new Error('down')) },
      ],
      250,
    );
    expect(failing).to.deep.equal(['kafka']);
  });

  it('stops waiting when the process begins to stop', async () => {
    const stopping = new AbortController();
    stopping.abort();
    expect(await waitUntilReady([{ name: 'kafka', check: () => Promise.reject(new Error('down')) }], 60_000, stopping.signal)).to.deep.equal(['kafka']);
  });
});
