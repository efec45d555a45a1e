// How the runner tells a failure it should wait out from one that retrying cannot fix.
import { PoisonEventError } from './projection.js';
import { ProjectionWriteError } from './table-writer.js';
import { GuestDataError } from './guest-data.js';

// SQLSTATE classes that say the statement itself is wrong for this data: data exceptions,
// integrity violations, syntax or undefined objects, unsupported features.
const DETERMINISTIC_CLASSES = new Set(['22', '23', '42', '0A', '44']);

/** A projection's checkpoint row was deleted under a running runner: it cannot know where it is. */
export class CheckpointMissing extends Error {
  override readonly name = 'CheckpointMissing';
  constructor(readonly projection: string) {
    super(`the checkpoint row of projection ${projection} is gone`);
  }
}

/** True for errors that the same batch will meet again however often it is retried. */
export function isDeterministic(error: unknown): boolean {
  if (error instanceof PoisonEventError || error instanceof GuestDataError || error instanceof CheckpointMissing) return true;
  if (error instanceof ProjectionWriteError) return isDeterministic(error.cause);
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.length === 5 && DETERMINISTIC_CLASSES.has(code.slice(0, 2));
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
