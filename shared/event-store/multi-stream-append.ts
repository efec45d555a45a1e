// Multi-stream appends for every store: its own appendToStreams when it has one (PostgreSQL
// writes many streams in one statement), else one appendToStream per stream with a bounded
// number in flight, so a bulk writer (the member import) is written once for both.
import type { AppendResult, EventStore, StreamAppend } from './event-store.js';

/** Appends in flight at once for a store that appends one stream per call. */
const ONE_BY_ONE_CONCURRENCY = 32;

/** Each append's outcome, in order; never rejects for one append's sake. */
export async function appendToStreams(store: EventStore, appends: readonly StreamAppend[]): Promise<Array<PromiseSettledResult<AppendResult>>> {
  if (appends.length === 0) return [];
  if (store.appendToStreams) return store.appendToStreams(appends);
  const outcomes: Array<PromiseSettledResult<AppendResult>> = new Array(appends.length);
  // Each worker takes the next stream not yet started; a stream named twice keeps its order
  // only when its appends do not run side by side, so those wait for the one before.
  const previous = new Map<string, Promise<unknown>>();
  let next = 0;
  const worker = async () => {
    while (next < appends.length) {
      const i = next++;
      const { streamName, events, expected } = appends[i]!;
      const before = previous.get(streamName);
      const append = (before ?? Promise.resolve()).then(() => store.appendToStream(streamName, events, expected));
      const settled = append.then(
        (value): PromiseSettledResult<AppendResult> => ({ status: 'fulfilled', value }),
        (reason: unknown): PromiseSettledResult<AppendResult> => ({ status: 'rejected', reason }),
      );
      previous.set(streamName, settled);
      outcomes[i] = await settled;
    }
  };
  await Promise.all(Array.from({ length: Math.min(ONE_BY_ONE_CONCURRENCY, appends.length) }, worker));
  return outcomes;
}
