import { expect } from 'chai';
import { CarriedRows } from '../../projections/carried-rows.js';
import type { StoredRow } from '../../projections/projection.js';

const row = (id: number, n: number): StoredRow => ({ id, n, _commit: '1', _prepare: String(n) });
const page = (first: string, last = first) => ({ first, last });

describe('CarriedRows (the rows a rebuild holds between its writes)', () => {
  it('asks for the rows it does not hold, and gives back those that exist', () => {
    const rows = new CarriedRows();
    expect(rows.missing([1, 2])).to.deep.equal([1, 2]);
    rows.addLoaded([1, 2], new Map([['1', row(1, 5)]]));
    expect(rows.missing([1, 2, 3])).to.deep.equal([3]);
    expect([...rows.rowsOf([1, 2]).entries()]).to.deep.equal([['1', row(1, 5)]]);
  });

  it('sends a row the table does not hold by COPY once, then as an update', () => {
    const rows = new CarriedRows();
    rows.addLoaded([7], new Map());
    rows.change({ upserts: [row(7, 1)], deletes: [], applied: 1 }, 'id', page('e1'));
    const first = rows.take();
    expect(first.changes.upserts).to.deep.equal([row(7, 1)]);
    expect(first.isStored('7'), 'not in the table before this write').to.equal(false);

    rows.change({ upserts: [row(7, 2)], deletes: [], applied: 1 }, 'id', page('e2'));
    const second = rows.take();
    expect(second.changes.upserts).to.deep.equal([row(7, 2)]);
    expect(second.isStored('7'), 'written by the write before').to.equal(true);
  });

  it('deletes only a row the table holds; a row made and deleted between two writes is never sent', () => {
    const rows = new CarriedRows();
    rows.addLoaded([1, 2], new Map([['1', row(1, 1)]]));
    rows.change({ upserts: [row(2, 1)], deletes: [], applied: 1 }, 'id', page('e1'));
    rows.change({ upserts: [], deletes: [1, 2], applied: 2 }, 'id', page('e2'));
    const taken = rows.take();
    expect(taken.changes).to.deep.equal({ upserts: [], deletes: [1] });

    rows.change({ upserts: [row(1, 3)], deletes: [], applied: 1 }, 'id', page('e3'));
    expect(rows.take().isStored('1'), 'deleted by the write before').to.equal(false);
  });

  it('holds on to every row up to its limit (hot rows), and past it only the rows of the write in flight', () => {
    const rows = new CarriedRows(2);
    rows.addLoaded([1, 2], new Map([
      ['1', row(1, 1)],
      ['2', row(2, 1)],
    ]));
    rows.change({ upserts: [row(1, 2)], deletes: [], applied: 1 }, 'id', page('e1'));
    rows.take();
    expect(rows.missing([1, 2]), 'two rows, within the limit: both held').to.deep.equal([]);
    rows.addLoaded([3], new Map());
    rows.change({ upserts: [row(3, 1)], deletes: [], applied: 1 }, 'id', page('e2'));
    rows.take();
    expect(rows.missing([1, 2, 3]), 'three rows, past the limit: 1 and 2 are in the table; 3 only once the write in flight commits').to.deep.equal([1, 2]);
    expect(rows.rowsOf([3]).get('3')).to.deep.equal(row(3, 1));
  });

  it('holds only the rows of the write in flight for a projection without hot rows', () => {
    const rows = new CarriedRows();
    rows.addLoaded([1, 2], new Map([
      ['1', row(1, 1)],
      ['2', row(2, 1)],
    ]));
    rows.change({ upserts: [row(2, 2)], deletes: [], applied: 1 }, 'id', page('e1'));
    rows.take();
    expect(rows.missing([1, 2]), 'row 1 is in the table; row 2 only once the write in flight commits').to.deep.equal([1]);
    expect(rows.rowsOf([2]).get('2')).to.deep.equal(row(2, 2));
  });

  it('counts the pages since its last write and names their first and last events', () => {
    const rows = new CarriedRows();
    rows.addLoaded([1], new Map());
    rows.change({ upserts: [], deletes: [], applied: 0 }, 'id', page('e1', 'e2'));
    rows.change({ upserts: [row(1, 1)], deletes: [], applied: 1 }, 'id', page('e3', 'e4'));
    expect(rows.pagesHeld).to.equal(2);
    expect(rows.take().span).to.deep.equal({ first: 'e1', last: 'e4' });
    expect(rows.pagesHeld).to.equal(0);
    expect(rows.take()).to.deep.include({ span: null, changes: { upserts: [], deletes: [] } });
  });
});
