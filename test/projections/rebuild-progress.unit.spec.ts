// A rebuild's progress is a share of the log's position range, which is about a share of the
// events in the PostgreSQL log and a share of the bytes in EventStoreDB's: never read as a count
// of events, and taken from where the replay started.
import { expect } from 'chai';
import { positionFraction } from '../../projections/rebuild.js';
import { ProgressBar, showRebuildProgress } from '../../projections/progress-bar.js';
import { START, type Position } from '../../shared/event-store/event-store.js';

const at = (prepare: bigint, commit = prepare): Position => ({ commit, prepare });

describe('rebuild progress', () => {
  it('is the share of the position range from the replay’s start to the head', () => {
    // PostgreSQL: commit is a transaction id, prepare the global sequence (about one per event).
    expect(positionFraction(START, at(250n, 9000n), at(1000n, 9100n))).to.equal(0.25);
    // EventStoreDB: byte offsets. A resumed replay that started at 1 MB is half done at 1.5 MB of 2 MB,
    // not three quarters (what dividing the position by the head's said).
    expect(positionFraction(at(1_000_000n), at(1_500_000n), at(2_000_000n))).to.equal(0.5);
  });

  it('stays within 0..1 and is null when there is nothing to replay', () => {
    expect(positionFraction(at(100n), at(50n), at(200n))).to.equal(0);
    expect(positionFraction(at(100n), at(300n), at(200n))).to.equal(1); // the head moved on since it was read
    expect(positionFraction(at(100n), at(100n), at(100n))).to.equal(null);
    expect(positionFraction(START, START, START)).to.equal(null);
  });

  it('is exact for positions beyond 2^53 (an EventStoreDB log of petabytes, or a sequence set high)', () => {
    const base = 2n ** 60n;
    expect(positionFraction(at(base), at(base + 1n), at(base + 4n))).to.equal(0.25);
  });

  it('is shown as a share of the log by position, beside the events read', () => {
    const written: string[] = [];
    const stream = { write: (t: string) => written.push(t), columns: 200, isTTY: false } as unknown as NodeJS.WriteStream;
    const show = showRebuildProgress(new ProgressBar({ stream, tty: false, lineEveryMs: 0 }));
    show({ projections: ['pass_list'], phase: 'replaying', events: 1234, position: at(3n), head: at(4n), fraction: 0.75, elapsedMs: 1000, eventsPerSecond: 1234 });
    expect(written[0]).to.match(/^ 75\.0% of the log by position {2}pass_list: 1,234 events read, 1,234\/s, replaying \(\d+s\)\n$/);
  });
});
