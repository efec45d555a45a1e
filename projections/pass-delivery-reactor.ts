// The pass delivery reactor's first half: follows the event store from its own checkpoint and,
// for each new batch of passes (a PassCreated with a pass page), puts the batch on the delivery
// work list (pass_delivery_jobs) in the same transaction that moves its checkpoint, so every
// batch is scheduled exactly once, whatever crashes. The worker (pass-delivery-worker.ts) sends.
//
// Batches from before the pass page existed (passLinkHash null) are never scheduled, so the
// first start may begin at the start of the log. A replay (a checkpoint reset) schedules known
// batches again at most: ON CONFLICT leaves their rows alone, and the worker sends nothing for a
// batch whose delivery stream says it is settled.
import type { Knex } from 'knex';
import type { Logger } from '../shared/logger.js';
import type { PassCreated } from '../shared/domain/events.js';
import { comparePositions, START, type EventStore, type Position, type RecordedEvent, type Subscription } from '../shared/event-store/event-store.js';
import { followFromCheckpoint, writeReactorCheckpoint } from './reactor-checkpoints.js';
import { StoppableRetry, type RetryOptions } from './stoppable-retry.js';
import type { Reactor } from './reactor.js';

export const PASS_DELIVERY_REACTOR = 'pass-delivery';
const CHECKPOINT_INTERVAL_MS = 1000;

export interface PassDeliveryReactorOptions {
  readonly store: EventStore;
  readonly knex: Knex;
  readonly logger?: Logger;
  /** Told after each committed batch that scheduled work (the in-process worker starts at once). */
  readonly onScheduled?: () => void;
  readonly batchSize?: number;
  readonly retry?: RetryOptions;
}

/** A row of pass_delivery_jobs as the reactor writes it. */
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

function asInsert(job: JobRow): Record<string, unknown> {
  return { ...job, pass: JSON.stringify(job.pass) };
}

export class PassDeliveryReactor implements Reactor {
  readonly name = PASS_DELIVERY_REACTOR;
  readonly handles = ['PassCreated'] as const;
  private subscription: Subscription | null = null;
  private readonly retry: StoppableRetry;
  private position: Position = START;
  private checkpointedAt = 0;

  constructor(private readonly options: PassDeliveryReactorOptions) {
    this.retry = new StoppableRetry('pass delivery reactor', options.logger, options.retry);
  }

  async start(): Promise<void> {
    if (this.subscription) throw new Error('pass delivery reactor already started');
    ({ position: this.position, subscription: this.subscription } = await followFromCheckpoint({
      ...this.options,
      name: this.name,
      retry: this.retry,
      batchSize: this.options.batchSize ?? 500,
      onEvents: (events) => this.handleBatch(events),
    }));
  }

  async stop(): Promise<void> {
    this.retry.stop();
    const subscription = this.subscription;
    this.subscription = null;
    await subscription?.stop();
  }

  /** Reactor seam (reactor.ts): schedules a batch's deliveries; resolves once they are on the work list. */
  async react(events: readonly RecordedEvent[]): Promise<void> {
    const jobs = deliveryJobsOf(events, new Date());
    if (jobs.length > 0) await this.options.knex('pass_delivery_jobs').insert(jobs.map(asInsert)).onConflict('batch_id').ignore();
  }

  private async handleBatch(events: readonly RecordedEvent[]): Promise<void> {
    const last = events.at(-1);
    if (!last || comparePositions(last.position, this.position) <= 0) return;
    const fresh = events.filter((e) => comparePositions(e.position, this.position) > 0);
    const jobs = deliveryJobsOf(fresh, new Date());
    // Most of the log schedules nothing (sign-ins, deliveries' own outcomes): such batches move
    // the position in memory and store it at most every CHECKPOINT_INTERVAL_MS. A crash before
    // then reads them again, which schedules nothing either.
    if (jobs.length === 0 && Date.now() - this.checkpointedAt < CHECKPOINT_INTERVAL_MS) {
      this.position = last.position;
      return;
    }
    await this.retry.run('schedule', () =>
      this.options.knex.transaction(async (trx) => {
        if (jobs.length > 0) await trx('pass_delivery_jobs').insert(jobs.map(asInsert)).onConflict('batch_id').ignore();
        await writeReactorCheckpoint(trx, this.name, last.position, jobs.length);
      }),
    );
    this.position = last.position;
    this.checkpointedAt = Date.now();
    if (jobs.length > 0) this.options.onScheduled?.();
  }
}
