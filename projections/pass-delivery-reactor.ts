// The pass delivery reactor's first half, the work list (pass_delivery_jobs), kept by the
// projection runner as a TransactionalReactor (reactor.ts): its rows are written with the batch's
// read-model writes and the list's checkpoint (forwarder_checkpoints, name `pass-delivery`) in
// one transaction, from events the runner has read and checked anyway, so nothing is missed or
// done twice whatever crashes:
//
// - a new batch of passes (a PassCreated with a pass page) goes on the list, due now;
// - a batch's recorded outcomes (PassDeliverySucceeded / PassDeliveryFailed, the events of one
//   round of attempts sharing one occurredAt) take it off the list (done), or make it due again
//   after the pause its transient failure calls for (about 1 s, 10 s, 1 min, 10 min, 1 h);
// - a resend (PassMessageResendRequested) puts a batch back on the list, due now, for a new round
//   (done or not: the round's outcomes after it take it off again).
//
// The worker (pass-delivery-worker.ts) sends and records; it writes the list itself only where
// no event says what became of a batch. The same transaction NOTIFYs `pass_delivery_due` (new
// work, for the workers of other processes; this process's are told directly, onWorkList) and
// `pass_delivery` with the ids of the batches whose outcomes it took in (for the creates waiting
// on them in every process, and for the workers holding them).
//
// Batches from before the pass page existed (passLinkHash null) are never put on the list, so the
// first start may begin at the start of the log. A replay (a checkpoint reset) puts known batches
// on the list again at most: ON CONFLICT leaves their rows alone, the outcomes replayed after
// them take them off again, and the worker sends nothing for a batch whose delivery stream says
// it is settled.
import { randomUUID } from 'node:crypto';
import { sqlLiteral } from '../shared/db/sql-literal.js';
import type { PassCreated } from '../shared/domain/events.js';
import type { PassDeliveryFailed, PassDeliverySucceeded, PassMessageResendRequested } from '../shared/domain/delivery-events.js';
import { nextAttemptAt } from '../shared/domain/delivery-plan.js';
import type { RecordedEvent } from '../shared/event-store/event-store.js';
import { DELIVERY_NOTIFY_CHANNEL, encodeDeliveryNotifications } from '../shared/delivery/delivery-outcomes.js';
import type { TransactionalReactor } from './reactor.js';

export const PASS_DELIVERY_REACTOR = 'pass-delivery';
/** NOTIFYed when jobs were put on the list; the payload names the process whose runner did (SCHEDULING_PROCESS). */
export const DELIVERY_DUE_CHANNEL = 'pass_delivery_due';
/** This process, as DELIVERY_DUE_CHANNEL's payload names it: its own workers were told directly. */
export const SCHEDULING_PROCESS = randomUUID();

/** A row of pass_delivery_jobs as the list is given it. */
export interface JobRow {
  batch_id: string;
  org_id: number;
  /** The batch's first PassCreated data (guest details sealed): the worker reads no event. */
  pass: PassCreated['data'];
  /** That event's id and correlation id: the outcomes' causation and correlation. */
  event_id: string;
  correlation_id: string;
  next_attempt_at: Date;
}

/** What becomes of a batch's row: done, or due again at a time (null keeps the row's). */
export interface JobUpdate {
  readonly batch_id: string;
  readonly done: boolean;
  readonly next_attempt_at: Date | null;
}

/** What a runner of this process changed on the list, told right after its commit. */
export interface WorkListChange {
  /** Batches put on the list. */
  readonly scheduled: number;
  /** Batches whose recorded outcomes the list took in. */
  readonly settledIds: readonly string[];
}

const listeners = new Set<(change: WorkListChange) => void>();

/** Calls `listener` after each commit of a runner of this process that changed the list; returns the unsubscribe function. */
export function onWorkList(listener: (change: WorkListChange) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The work-list rows for the new batches among `events` (one per batch, its first PassCreated). */
export function deliveryJobsOf(events: readonly RecordedEvent[], now: Date): JobRow[] {
  const jobs = new Map<string, JobRow>();
  for (const event of events) {
    if (event.type !== 'PassCreated') continue;
    const data = event.data as PassCreated['data'];
    if (data.passLinkHash === null || jobs.has(data.batchId)) continue;
    jobs.set(data.batchId, {
      batch_id: data.batchId,
      org_id: data.orgId,
      pass: data,
      event_id: event.id,
      correlation_id: event.metadata.correlationId,
      next_attempt_at: now,
    });
  }
  return [...jobs.values()];
}

/**
 * What the outcomes among `events` say of their batches' rows, from each batch's last round (the
 * events of one append share their occurredAt): a transient failure makes the batch due again
 * after its pause; a round without one leaves nothing to do (every channel it tried is settled,
 * and the worker tries every pending channel the guest gave an address for).
 */
export function jobUpdatesOf(events: readonly RecordedEvent[]): JobUpdate[] {
  const rounds = new Map<string, { at: string; retryAt: Date | null }>();
  for (const event of events) {
    // A resend: what came before it of this batch says nothing of the new round.
    if (event.type === 'PassMessageResendRequested') rounds.delete((event.data as PassMessageResendRequested['data']).batchId);
    if (event.type !== 'PassDeliverySucceeded' && event.type !== 'PassDeliveryFailed') continue;
    const data = event.data as PassDeliverySucceeded['data'] | PassDeliveryFailed['data'];
    const at = event.metadata.occurredAt;
    let round = rounds.get(data.batchId);
    if (!round || round.at !== at) rounds.set(data.batchId, (round = { at, retryAt: null }));
    if (event.type === 'PassDeliveryFailed' && !(data as PassDeliveryFailed['data']).final) {
      const retryAt = nextAttemptAt(data.attempt, new Date(at));
      if (!round.retryAt || retryAt > round.retryAt) round.retryAt = retryAt;
    }
  }
  return [...rounds].map(([batch_id, round]) => ({ batch_id, done: round.retryAt === null, next_attempt_at: round.retryAt }));
}

/** The batches a resend among `events` puts back on the list (each once). */
export function resentBatchesOf(events: readonly RecordedEvent[]): string[] {
  const ids = new Set<string>();
  for (const event of events) {
    if (event.type === 'PassMessageResendRequested') ids.add((event.data as PassMessageResendRequested['data']).batchId);
  }
  return [...ids];
}

/**
 * The resent batches due now, done or not: run before the chunk's outcome updates, so that the
 * new round's outcomes in the same chunk (jobUpdatesOf keeps only those) have the last word.
 */
export function reviveJobsStatement(batchIds: readonly string[], now: Date): string {
  return `UPDATE pass_delivery_jobs SET done = false, next_attempt_at = ${sqlLiteral(now.toISOString())}::timestamptz, updated_at = now()
     WHERE batch_id = ANY(${sqlLiteral(`{${batchIds.join(',')}}`)}::text[])`;
}

/**
 * One INSERT for all the jobs, values inlined as one JSON literal (the runner's batch takes no
 * parameters). sqlLiteral, not pg's escapeLiteral: the jobs carry the sealed guest data (about
 * 1 kB each), which pg's one concatenation per character took about 12 µs a job to quote.
 */
export function insertJobsStatement(jobs: readonly JobRow[]): string {
  const json = JSON.stringify(jobs.map((j) => ({ ...j, next_attempt_at: j.next_attempt_at.toISOString() })));
  return `INSERT INTO pass_delivery_jobs (batch_id, org_id, pass, event_id, correlation_id, next_attempt_at)
     SELECT batch_id, org_id, pass, event_id, correlation_id, next_attempt_at
     FROM json_to_recordset(${sqlLiteral(json)}::json)
       AS j(batch_id text, org_id bigint, pass jsonb, event_id uuid, correlation_id text, next_attempt_at timestamptz)
     ON CONFLICT (batch_id) DO NOTHING`;
}

/**
 * One UPDATE for all the rows; a row once done stays done (a replayed older round does not revive
 * it). The LIMIT tells the planner how many rows the JSON holds: guessing 100, it read the whole
 * list (done rows and all) into a hash join rather than look the few rows up by key.
 */
export function updateJobsStatement(updates: readonly JobUpdate[]): string {
  const json = JSON.stringify(updates.map((u) => ({ ...u, next_attempt_at: u.next_attempt_at?.toISOString() ?? null })));
  return `UPDATE pass_delivery_jobs AS j
     SET done = j.done OR u.done,
         next_attempt_at = CASE WHEN j.done OR u.done THEN j.next_attempt_at ELSE coalesce(u.next_attempt_at, j.next_attempt_at) END,
         updated_at = now()
     FROM (SELECT * FROM json_to_recordset(${sqlLiteral(json)}::json) AS r(batch_id text, done boolean, next_attempt_at timestamptz) LIMIT ${updates.length}) AS u
     WHERE j.batch_id = u.batch_id`;
}

function notify(channel: string, payload: string): string {
  return `SELECT pg_notify(${sqlLiteral(channel)}, ${sqlLiteral(payload)})`;
}

export const passDeliveryScheduler: TransactionalReactor = {
  name: PASS_DELIVERY_REACTOR,
  handles: ['PassCreated', 'PassDeliverySucceeded', 'PassDeliveryFailed', 'PassMessageResendRequested'],
  statements(events) {
    const now = new Date();
    const jobs = deliveryJobsOf(events, now);
    const resent = resentBatchesOf(events);
    const updates = jobUpdatesOf(events);
    if (jobs.length === 0 && resent.length === 0 && updates.length === 0) return { statements: [], acted: 0 };
    const settledIds = updates.map((u) => u.batch_id);
    const statements = [
      ...(jobs.length > 0 ? [insertJobsStatement(jobs)] : []),
      ...(resent.length > 0 ? [reviveJobsStatement(resent, now)] : []),
      ...(jobs.length > 0 || resent.length > 0 ? [notify(DELIVERY_DUE_CHANNEL, SCHEDULING_PROCESS)] : []),
      ...(updates.length > 0 ? [updateJobsStatement(updates), ...encodeDeliveryNotifications(settledIds).map((ids) => notify(DELIVERY_NOTIFY_CHANNEL, ids))] : []),
    ];
    const change: WorkListChange = { scheduled: jobs.length + resent.length, settledIds };
    return {
      statements,
      acted: jobs.length + resent.length + updates.length,
      committed: () => {
        for (const listener of [...listeners]) listener(change);
      },
    };
  },
};
