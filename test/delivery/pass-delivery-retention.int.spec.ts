// The delivery work list forgets a batch a week after it was done, and only then: rows still due
// (whatever their age) and recently done ones stay.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { migratedDatabase } from '../support/database.js';
import { deleteDoneJobs, DONE_JOB_RETENTION_MS, sweepDoneJobs } from '../../projections/pass-delivery-retention.js';

const DAY = 24 * 60 * 60 * 1000;

describe('pass delivery work list retention (PostgreSQL)', function () {
  this.timeout(30_000);
  let knex: Knex;

  before(async () => {
    ({ knex } = await migratedDatabase('delivery_retention'));
  });
  after(async () => {
    await knex?.destroy();
  });

  async function job(batchId: string, done: boolean, updatedDaysAgo: number, validUntil?: Date): Promise<void> {
    const at = new Date(Date.now() - updatedDaysAgo * DAY);
    await knex('pass_delivery_jobs').insert({
      batch_id: batchId,
      org_id: 1,
      pass: JSON.stringify(validUntil ? { batchId, validUntil: validUntil.toISOString() } : { batchId }),
      event_id: randomUUID(),
      correlation_id: randomUUID(),
      next_attempt_at: at,
      done,
      created_at: at,
      updated_at: at,
    });
  }
  const left = async () => (await knex('pass_delivery_jobs').orderBy('batch_id').pluck('batch_id')) as string[];

  it('deletes the rows done more than the retention ago, in slices, and keeps the rest', async () => {
    await job('done-8-days-ago', true, 8);
    await job('done-yesterday', true, 1);
    await job('due-since-30-days', false, 30);
    // Still valid: a host may ask for its message again, which needs its row.
    await job('done-8-days-ago-valid-tomorrow', true, 8, new Date(Date.now() + DAY));
    await job('done-8-days-ago-valid-until-yesterday', true, 8, new Date(Date.now() - DAY));
    // Enough old done rows for several slices.
    await knex.raw(
      `INSERT INTO pass_delivery_jobs (batch_id, org_id, pass, event_id, correlation_id, next_attempt_at, done, created_at, updated_at)
       SELECT 'old-' || i, 1, '{}'::jsonb, gen_random_uuid(), 'c', now(), true, now() - interval '10 days', now() - interval '10 days'
       FROM generate_series(1, 2500) AS i`,
    );
    const deleted = await deleteDoneJobs(knex, new Date(Date.now() - DONE_JOB_RETENTION_MS), 1000);
    expect(deleted).to.equal(2502);
    expect(await left()).to.deep.equal(['done-8-days-ago-valid-tomorrow', 'done-yesterday', 'due-since-30-days']);
  });

  it('the sweeper deletes at once when started, by its clock', async () => {
    await knex('pass_delivery_jobs').del();
    await job('done-yesterday', true, 1);
    await job('done-3-days-ago', true, 3);
    // Five days on, the one done three days ago is past its week; the other is not.
    const stop = sweepDoneJobs(knex, undefined, () => Date.now() + 5 * DAY);
    await stop();
    expect(await left()).to.deep.equal(['done-yesterday']);
  });
});
