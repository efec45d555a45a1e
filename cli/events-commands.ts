// `npx guestpass events ...`: the event log as NDJSON, for auditors.
import { parsePosition, START, positionToString } from '../shared/event-store/event-store.js';
import type { Runtime } from '../runtime/runtime.js';
import { integerArg, noPositionals, optional, parse, UsageError } from './cli-args.js';
import type { Io } from './cli-kit.js';

/** NDJSON of the log, for auditors: one event a line, in global order (or one stream's order). */
export async function eventsCommand(runtime: Runtime, args: string[], io: Io): Promise<void> {
  const [action, ...rest] = args;
  if (action !== 'export') throw new UsageError('events export [--stream S] [--from POSITION]');
  const { values, positionals } = parse(rest, { stream: { type: 'string' }, from: { type: 'string' } });
  noPositionals(positionals);
  const stream = optional(values, 'stream');
  const from = optional(values, 'from');
  let count = 0;
  const print = (e: Awaited<ReturnType<Runtime['store']['readAll']>>[number]) => {
    count++;
    io.out(
      JSON.stringify({
        id: e.id,
        stream: e.streamName,
        revision: e.revision,
        position: positionToString(e.position),
        type: e.type,
        data: e.data,
        metadata: e.metadata,
        recorded_at: e.recordedAt.toISOString(),
      }),
    );
  };
  if (stream) {
    const fromRevision = from === undefined ? 0 : integerArg(from, '--from', 0);
    for (;;) {
      const page = await runtime.store.readStream(stream, { fromRevision: fromRevision + count, maxCount: 1000 });
      page.forEach(print);
      if (page.length < 1000 || io.closed?.()) break;
    }
  } else {
    let after = START;
    if (from !== undefined) {
      try {
        after = parsePosition(from);
      } catch {
        throw new UsageError('--from must be a position as printed by a previous export (COMMIT/PREPARE)');
      }
    }
    for (;;) {
      const page = await runtime.store.readAll({ after, maxCount: 1000 });
      page.forEach(print);
      if (page.length === 0 || io.closed?.()) break;
      after = page.at(-1)!.position;
    }
  }
}
