import { expect } from 'chai';
import { BlockReserve } from '../../shared/db/block-reserve.js';

function counter(blockSize: number) {
  let next = 1;
  const draws: number[][] = [];
  const drawBlock = async () => {
    const block = Array.from({ length: blockSize }, () => next++);
    draws.push(block);
    return block;
  };
  return { drawBlock, draws };
}

describe('BlockReserve', () => {
  it('hands out items in draw order, concurrent takers sharing one draw', async () => {
    const { drawBlock, draws } = counter(4);
    const reserve = new BlockReserve(drawBlock, 0);
    expect(await Promise.all([reserve.take(), reserve.take(2)])).to.deep.equal([[1], [2, 3]]);
    expect(draws).to.have.length(1);
  });

  it('draws as many blocks as a large take needs', async () => {
    const { drawBlock } = counter(2);
    expect(await new BlockReserve(drawBlock, 0).take(5)).to.deep.equal([1, 2, 3, 4, 5]);
  });

  it('starts the next draw once fewer than `low` are left', async () => {
    const { drawBlock, draws } = counter(4);
    const reserve = new BlockReserve(drawBlock, 2);
    await reserve.take(3); // one left: below 2
    await new Promise((r) => setImmediate(r));
    expect(draws).to.have.length(2);
    expect(await reserve.take(2)).to.deep.equal([4, 5]);
  });

  it('never hands out a discarded item', async () => {
    const { drawBlock } = counter(4);
    const reserve = new BlockReserve(drawBlock, 0);
    await reserve.take();
    reserve.discard((n) => n === 2 || n === 3);
    expect(await reserve.take(2)).to.deep.equal([4, 5]);
  });

  it('passes a failed draw to the taker waiting for it, and draws again on the next take', async () => {
    let fail = true;
    const reserve = new BlockReserve(async () => {
      if (fail) throw new Error('database down');
      return [7];
    }, 0);
    let error: unknown;
    await reserve.take().catch((e: unknown) => (error = e));
    expect(error).to.be.instanceOf(Error);
    fail = false;
    expect(await reserve.take()).to.deep.equal([7]);
  });
});
