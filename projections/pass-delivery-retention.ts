// How long the pass delivery work list (pass_delivery_jobs) keeps a batch once it is done, and the
// sweeper that deletes it then. While a done row is there, a replayed older round of outcomes
// cannot make its batch due again (pass-delivery-reactor.ts); after a week nothing replays it but
// a reset of the reactor's checkpoint, which puts the batch back on the list, where the worker finds
// its delivery stream settled and sends nothing. So the list holds the recent past only, not one
// row per batch for ever. A batch whose passes are still valid keeps its row past the week: a
// host may ask for its message again (a resend makes the row due again; it does not create one).
//
// Deleted in slices, each its own short transaction: with the PostgreSQL event store a long
// write transaction would hold back every reader of the log (README, "Production"). Every process
// that delivers sweeps; two sweeping at once delete each row once.
import type { Knex } from 'knex';
import type { Logger } from '../shared/logger.js';

/** Done rows are kept this long after they were done. */
export const DONE_JOB_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
const SLICE = 1000;
const SWEEP_EVERY_MS = 60 * 60 * 1000;

/** Deletes the rows done before `before`, a slice at a time; resolves with how many. */
export async function deleteDoneJobs(knex: Knex, before: Date, slice = SLICE, now = new Date()): Promise<number> {
  let deleted = 0;
  for (;;) {
    const { rowCount } = await knex.raw<{ rowCount: number }>(
      `DELETE FROM pass_delivery_jobs WHERE batch_id IN (
         SELECT batch_id FROM pass_delivery_jobs
         WHERE done AND updated_at < ? AND coalesce((pass->>'validUntil')::timestamptz, '-infinity'::timestamptz) < ?
         LIMIT ?)`,
      [before.toISOString(), now.toISOString(), slice],
    );
    deleted += rowCount;
    if (rowCount < slice) return deleted;
  }
}

/** Sweeps at once and then every hour; the returned function stops it (after a sweep under way). */
export function sweepDoneJobs(knex: Knex, logger?: Logger, now: () => number = Date.now): () => Promise<void> {
  let sweeping: Promise<void> | null = null;
  const sweep = () => {
    sweeping ??= deleteDoneJobs(knex, new Date(now() - DONE_JOB_RETENTION_MS), SLICE, new Date(now()))
      .then((deleted) => void (deleted > 0 && logger?.info({ deleted }, 'pass delivery: done work-list rows past their week deleted')))
      .catch((error: unknown) => logger?.warn({ err: error }, 'pass delivery: deleting done work-list rows failed; trying again in an hour'))
      .finally(() => (sweeping = null));
  };
  sweep();
  const timer = setInterval(sweep, SWEEP_EVERY_MS);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await sweeping;
  };
}
