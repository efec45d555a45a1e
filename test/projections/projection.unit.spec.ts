import { expect } from 'chai';
import {
  PoisonEventError,
  keysOf,
  projectBatch,
  projectEvent,
  searchText,
  type Projection,
  type StoredRow,
} from '../../projections/projection.js';
import { selectProjections, ALL_PROJECTIONS } from '../../projections/all-projections.js';
import { decodeProgress, encodeProgress } from '../../projections/progress-channel.js';
import { ProgressBar, showRebuildProgress } from '../../projections/progress-bar.js';
import { READ_MODELS } from '../../shared/db/read-models.js';
import { EventLog, feed, passCreated } from './fixtures.js';

interface CounterRow {
  id: number;
  n: number;
}

/** A projection that counts passes per org and deletes the row on a revocation. */
const counter: Projection<CounterRow> = {
  name: 'counter',
  version: 1,
  handles: ['PassCreated', 'PassRevoked'],
  keyColumn: 'id',
  keyOf: (e) => (e.type === 'PassCreated' || e.type === 'PassRevoked' ? e.data.orgId : null),
  apply(row, e) {
    if (e.type === 'PassRevoked') return row ? null : undefined;
    if (e.type !== 'PassCreated') return undefined;
    if (e.data.passId === 666) throw new Error('cannot handle the beast');
    return { id: e.data.orgId, n: (row?.n ?? 0) + 1 };
  },
  createTable: async () => undefined,
};

describe('projection model', () => {
  it('stamps each row with the position of the last event applied and skips events at or before it', () => {
    const log = new EventLog();
    const first = log.add(passCreated(1));
    const second = log.add(passCreated(2));
    const row = projectEvent(counter, undefined, first) as StoredRow;
    expect(row).to.deep.equal({ id: 1, n: 1, _commit: first.position.commit.toString(), _prepare: first.position.prepare.toString() });
    expect(projectEvent(counter, row, first)).to.equal(undefined);
    const next = projectEvent(counter, row, second) as StoredRow;
    expect(next.n).to.equal(2);
    expect(projectEvent(counter, next, first)).to.equal(undefined);
    expect(row.n).to.equal(1); // the input row is not mutated
  });

  it('nets a batch into upserts and deletes of rows that existed', () => {
    const log = new EventLog();
    log.add(passCreated(1, { orgId: 1 }));
    log.add(passCreated(2, { orgId: 2 }));
    const rows = feed(counter, log.events);
    const batch = new EventLog();
    // Positions of a second log start over; shift them past the first one's.
    const revoke = { ...batch.add({ type: 'PassRevoked', data: { passId: 1, publicId: 'p', orgId: 1, facilityId: 1, qrHash: 'h' } }) };
    const later = { ...revoke, id: 'x', position: { commit: 5000n, prepare: 1n } };
    const created = { ...batch.add(passCreated(3, { orgId: 3 })), position: { commit: 5001n, prepare: 1n } };
    const changes = projectBatch(counter, rows, [later, created]);
    expect(changes.deletes).to.deep.equal([1]);
    expect(changes.upserts.map((r) => r.id)).to.deep.equal([3]);
    expect(changes.applied).to.equal(2);
  });

  it('does not delete a row created and deleted within the same batch', () => {
    const log = new EventLog();
    log.add(passCreated(1, { orgId: 4 }));
    log.add({ type: 'PassRevoked', data: { passId: 1, publicId: 'p', orgId: 4, facilityId: 1, qrHash: 'h' } });
    const changes = projectBatch(counter, new Map(), log.events);
    expect(changes).to.deep.equal({ upserts: [], deletes: [], applied: 2 });
  });

  it('turns an exception in apply into a PoisonEventError naming the event', () => {
    const log = new EventLog();
    log.add(passCreated(1));
    const poison = log.add(passCreated(666));
    let error: unknown;
    try {
      feed(counter, log.events);
    } catch (e) {
      error = e;
    }
    expect(error).to.be.instanceOf(PoisonEventError);
    expect((error as PoisonEventError).eventId).to.equal(poison.id);
    expect((error as PoisonEventError).message).to.contain(poison.id).and.contain('cannot handle the beast');
  });

  it('lists the distinct keys a batch touches', () => {
    const log = new EventLog();
    log.add(passCreated(1, { orgId: 1 }));
    log.add(passCreated(2, { orgId: 1 }));
    log.add(passCreated(3, { orgId: 2 }));
    log.add({ type: 'FacilityAdded', data: { facilityId: 1, orgId: 3, name: 'x', description: null } });
    expect(keysOf(counter, log.events)).to.deep.equal([1, 2]);
  });

  it('builds lower-cased search text from the parts present', () => {
    expect(searchText(['  Ada ', null, '', 'A@B.C', undefined])).to.equal('ada a@b.c');
  });

  it('has one projection per read model, each named after its view', () => {
    expect(ALL_PROJECTIONS.map((p) => p.name).sort()).to.deep.equal(Object.values(READ_MODELS).sort());
    expect(selectProjections(['users']).map((p) => p.name)).to.deep.equal(['users']);
    expect(() => selectProjections(['nope'])).to.throw(/unknown projection "nope"/);
  });

  it('encodes progress notifications compactly and ignores malformed parts', () => {
    const progress = [
      { name: 'pass_list', position: { commit: 12n, prepare: 34n } },
      { name: 'users', position: { commit: 18446744073709551615n, prepare: 1n } },
    ];
    expect(encodeProgress(progress)).to.equal('pass_list=12/34 users=18446744073709551615/1');
    expect(decodeProgress(encodeProgress(progress))).to.deep.equal(progress);
    expect(decodeProgress('junk a=1 b=2/3')).to.deep.equal([{ name: 'b', position: { commit: 2n, prepare: 3n } }]);
  });

  it('draws a \\r progress line on a terminal and plain lines otherwise', () => {
    const written: string[] = [];
    const stream = { write: (s: string) => written.push(s), columns: 80, isTTY: true } as unknown as NodeJS.WriteStream;
    const tty = new ProgressBar({ stream, label: 'rebuild', tty: true });
    tty.update({ fraction: 0.5, detail: '10 events' });
    tty.finish({ fraction: 1, detail: '20 events' });
    expect(written[0]).to.match(/^\rrebuild \[#{14}-{14}\]  50\.0%  10 events/);
    expect(written.at(-1)).to.equal('\n');
    written.length = 0;
    const plain = new ProgressBar({ stream, tty: false, lineEveryMs: 60_000 });
    plain.update({ fraction: 0.25, detail: 'a' });
    plain.update({ fraction: 0.3, detail: 'b' }); // throttled
    plain.finish({ fraction: null, detail: 'done' });
    expect(written).to.have.length(2);
    expect(written[0]).to.match(/^ 25\.0%  a \(\d+s\)\n$/);
    expect(written[1]).to.match(/^done \(\d+s\)\n$/);
  });

  it('shows a rebuild on the bar and ends the line when it is done', () => {
    const written: string[] = [];
    const stream = { write: (t: string) => written.push(t), columns: 200, isTTY: true } as unknown as NodeJS.WriteStream;
    const show = showRebuildProgress(new ProgressBar({ stream, tty: true, label: 'rebuild' }));
    const base = { projections: ['pass_list'], position: { commit: 1n, prepare: 1n }, head: { commit: 2n, prepare: 2n }, elapsedMs: 1000 };
    show({ ...base, phase: 'replaying', events: 1500, fraction: 0.5, eventsPerSecond: 1500 });
    show({ ...base, phase: 'done', events: 3000, fraction: 1, eventsPerSecond: 3000 });
    // A share of the log's position range (bytes in EventStoreDB), said to be one, beside the count of events.
    expect(written[0]).to.contain('50.0% of the log by position').and.contain('pass_list: 1,500 events read, 1,500/s, replaying');
    expect(written[1]).to.contain('100.0% of the log by position').and.contain('3,000 events read');
    expect(written.at(-1)).to.equal('\n');
  });
});
