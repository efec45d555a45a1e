// `npx guestpass projections ...`: the read models' status and their rebuild.
import { positionToString } from '../shared/event-store/event-store.js';
import { rebuildProjections } from '../projections/rebuild.js';
import { onShutdownSignal } from '../shared/shutdown-signal.js';
import { formatStatus, projectionStatus, statusToJson } from '../projections/status.js';
import { ProgressBar, showRebuildProgress } from '../projections/progress-bar.js';
import { ALL_PROJECTIONS } from '../projections/all-projections.js';
import type { Runtime } from '../runtime/runtime.js';
import { noPositionals, parse, UsageError } from './cli-args.js';
import { quietLogger, type Io, type Result } from './cli-kit.js';

export async function projectionsCommand(runtime: Runtime, args: string[], json: boolean, io: Io): Promise<Result> {
  const [action, ...rest] = args;
  const deps = { knex: runtime.knex, store: runtime.store, subjectKeys: runtime.deps.subjectKeys, contactHasher: runtime.contactHasher, logger: quietLogger };
  if (action === 'status') {
    noPositionals(parse(rest, {}).positionals);
    const report = await projectionStatus(deps);
    return { json: statusToJson(report), text: formatStatus(report) };
  }
  if (action === 'rebuild') {
    const { positionals } = parse(rest, {});
    // Checked before rebuilding anything: an unknown name is a usage error, not a failed rebuild.
    const known = ALL_PROJECTIONS.map((p) => p.name);
    const unknown = positionals.find((name) => !known.includes(name));
    if (unknown !== undefined) throw new UsageError(`unknown projection "${unknown}"; known: ${known.join(', ')}`);
    const result = await untilSignalled(io, (signal) =>
      rebuildProjections(positionals.length ? positionals : undefined, deps, {
        onProgress: json ? undefined : showRebuildProgress(new ProgressBar({ label: 'rebuild' })),
        signal,
      }),
    );
    const names = result.projections.map((p) => p.name);
    return {
      json: {
        rebuilt: result.projections.map((p) => ({ name: p.name, generation: p.generation, position: positionToString(p.position) })),
        events: result.events,
        duration_ms: Math.round(result.durationMs),
        events_per_second: Math.round(result.eventsPerSecond),
      },
      text: `rebuilt ${names.join(', ')}: ${result.events} events in ${(result.durationMs / 1000).toFixed(1)} s`,
    };
  }
  throw new UsageError('projections status|rebuild [NAME]');
}

/**
 * Runs work that stops cleanly through its signal: the first SIGINT or SIGTERM asks it to stop
 * (a rebuild ends its page and the index build under way, keeping its progress), a second one
 * exits at once. The runtime (an embedded server too) is closed after it by main.
 */
async function untilSignalled<T>(io: Io, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const stop = new AbortController();
  const release = onShutdownSignal(() => {
    // On a terminal, below the progress bar's line rather than over it.
    io.err(`${process.stderr.isTTY ? '\n' : ''}guestpass: stopping when the step under way ends (again to quit at once)`);
    stop.abort();
  });
  try {
    return await work(stop.signal);
  } finally {
    release();
  }
}
