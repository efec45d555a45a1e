// The pass delivery reactor's second half: takes due batches off the work list
// (pass_delivery_jobs), sends each pending channel's one message, and records every attempt's
// outcome as an event on the batch's delivery stream (pass-delivery-decider.ts).
// One piece past 500 lines: claiming, sending and recording share one lock, one connection and
// one round's state; the message composing and the decisions already live in modules of their own.
//
// Several workers (projections processes) may run: a batch is worked on under a PostgreSQL
// session advisory lock on the worker's own connection, which the server releases when the
// process dies, so a killed worker's batches are due again at once; no transaction is held open
// while a provider is called (one would hold back the PostgreSQL event store's readers).
//
// At-least-once: before sending, the worker reads the batch's delivery stream, so a channel whose
// outcome is recorded is never sent again (nor on a replay or a rebuild). Only a crash between
// the provider's acceptance and the recording sends that one message again, with the same
// Message-ID / idempotency key for the receiver to drop.
//
// Work is done in rounds, so that its cost does not grow with the number of batches: one round
// trip on the worker's connection lets go of the batches finished since the last round and locks
// the next due ones; one read fetches the delivery streams of all the batches a round took, one
// key-store query their keys. Each batch then sends and records on its own (a batch waiting on a
// slow provider holds up no other), and the outcomes recorded in the same turn go to the store as
// one append (its group commit). The work list learns of a recorded outcome from the log: the
// projection runner takes the batch off it, or makes it due again after its pause, in its own
// transaction (pass-delivery-reactor.ts), and only then does the worker let go of the batch's lock
// (told directly by a runner of this process, or by its NOTIFY). So the worker writes no row on
// the way of a delivery (a write transaction of its own would also hold back the PostgreSQL event
// store's readers while it runs); it writes the list itself only where no event says what became
// of a batch (nothing left to do, an outcome it could not record, a pause not waited out yet).
// Whoever looks at a batch, its retries wait out their pauses, as the log's times say.
// (Past 500 lines: rounds, locks and sends share the state of the batches in hand.)
import { DEFAULT_TIME_ZONE } from '../shared/domain/time-zone.js';
import type { Knex } from 'knex';
import pg from 'pg';
import type { Logger } from '../shared/logger.js';
import { fold } from '../shared/domain/decider.js';
import { streams, type GuestDetails, type PassCreated } from '../shared/domain/events.js';
import { passDeliveryDecider, type DeliveryOutcome, type PassDeliveryState } from '../shared/domain/pass-delivery-decider.js';
import { isLastAttempt, nextAttemptAt, planDelivery, type PlannedStep } from '../shared/domain/delivery-plan.js';
import type { PassDeliveryFailed } from '../shared/domain/delivery-events.js';
import type { CommandHandler, CommandContext } from '../shared/event-store/command-handler.js';
import type { EventStore, RecordedEvent } from '../shared/event-store/event-store.js';
import { DELIVERY_DUE_CHANNEL, onWorkList, SCHEDULING_PROCESS, updateJobsStatement, type JobRow, type JobUpdate } from './pass-delivery-reactor.js';
import type { SubjectKeyStore } from '../shared/crypto/subject-keys.js';
import { open } from '../shared/crypto/sealed-box.js';
import { READ_MODELS } from '../shared/db/read-models.js';
import { sqlLiteral } from '../shared/db/sql-literal.js';
import { DeliveryFailure, type MailSender, type SmsSender } from '../shared/delivery/delivery-ports.js';
import { composePassEmail, composePassSms, type PassMessageContent } from '../shared/delivery/pass-message.js';
import { DELIVERY_NOTIFY_CHANNEL, type DeliveryReport } from '../shared/delivery/delivery-outcomes.js';

export interface PassDeliveryWorkerOptions {
  readonly knex: Knex;
  readonly store: EventStore;
  readonly handler: CommandHandler;
  readonly subjectKeys: SubjectKeyStore;
  readonly mail: MailSender;
  readonly sms: SmsSender;
  readonly mailFrom: string;
  /** PUBLIC_BASE_URL (or the service's own address): the pass links and the Message-ID's domain. */
  readonly baseUrl: string;
  readonly logger?: Logger;
  /** Told of each batch whose outcome this worker recorded, with the stream's state after it (the in-process create waits on it). */
  readonly onRecorded?: (batchId: string, report: DeliveryReport) => void;
  /** How often the work list is looked at when nothing woke the worker (default 1000 ms). */
  readonly pollIntervalMs?: number;
  /** Batches worked on at once (default 64). */
  readonly concurrency?: number;
  /** Test seam: the clock. */
  readonly now?: () => Date;
}

type DueJob = Pick<JobRow, 'batch_id' | 'pass' | 'event_id' | 'correlation_id'>;

/** A batch this worker is done with (for now): the next round lets go of it, writing its row first when `update` says how. */
interface Finished {
  readonly batchId: string;
  readonly update: JobUpdate | null;
}

/** What became of a batch in hand. */
type Delivered =
  /** An outcome was recorded: held until the work list has taken it in. */
  | { readonly kind: 'recorded' }
  /** Nothing recorded (nothing to do, a pause not waited out, a recording that failed): the row says what next. */
  | { readonly kind: 'finished'; readonly update: JobUpdate | null };

/** A claimed batch with what its round read for it. */
interface Prepared {
  readonly job: DueJob;
  /** The batch's delivery stream as read before sending. */
  readonly events: readonly RecordedEvent[];
  readonly state: PassDeliveryState;
  readonly revision: number | 'no_stream';
  /** null when the batch's key is gone (erased). */
  readonly key: Buffer | null;
  readonly facility: FacilityFacts;
}

/** What a message says of the facility: its name, and its zone (the times shown are its local time). */
interface FacilityFacts {
  readonly name: string;
  readonly timeZone: string;
}

const UNKNOWN_FACILITY: FacilityFacts = { name: 'the facility', timeZone: DEFAULT_TIME_ZONE };

/** How long a facility's name and zone are taken as known (a change shows in messages after this). */
const FACILITY_NAME_TTL_MS = 60_000;

/** How long a batch whose outcome could not be recorded waits before it is tried again. */
const RECORD_FAILURE_PAUSE_MS = 60_000;

/** Namespace of the advisory locks on batches (the second key is the batch id's hashtext). */
const BATCH_LOCK_SPACE = 7_302_517;

/**
 * How long a batch whose outcome was recorded is held for the work list to take it in. Past it
 * (no runner is running) its lock goes anyway: whoever takes the batch next reads the outcome
 * and waits out any pause it calls for.
 */
const WORK_LIST_WAIT_MS = 10_000;

export class PassDeliveryWorker {
  private lockClient: pg.Client | null = null;
  private lockQueue: Promise<void> = Promise.resolve();
  /** Batches done with, their rows and locks seen to by the next round. */
  private readonly finished: Finished[] = [];
  private readonly facilityNames = new Map<number, { readonly facts: FacilityFacts; readonly until: number }>();
  /** Batches in hand (locked), by id, until the round after they finish. */
  private readonly inFlight = new Map<string, Promise<void>>();
  /** Batches whose outcome was recorded, held (locked) until the work list takes it in: since when. */
  private readonly awaiting = new Map<string, number>();
  /** Batches in hand whose outcome the work list took in before they were done here. */
  private readonly takenIn = new Set<string>();
  private running: Promise<void> | null = null;
  private stopping = false;
  private wake: (() => void) | null = null;
  private wanted = false;
  private unlisten: (() => void) | null = null;
  private readonly now: () => Date;

  constructor(private readonly options: PassDeliveryWorkerOptions) {
    this.now = options.now ?? (() => new Date());
  }

  start(): void {
    if (this.running) throw new Error('pass delivery worker already started');
    // A runner of this process tells of changes to the work list directly; other processes' by NOTIFY.
    this.unlisten = onWorkList((change) => {
      this.takenInByList(change.settledIds);
      if (change.scheduled > 0) this.poke();
    });
    this.running = this.loop();
  }

  /** Looks at the work list now (new work was scheduled, or a batch finished). */
  poke(): void {
    this.wanted = true;
    this.wake?.();
  }

  /** Finishes the batches in hand, records what became of them, then lets go of its locks. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.unlisten?.();
    this.wake?.();
    await this.running;
    this.running = null;
    await Promise.all(this.inFlight.values());
    // The ones still waiting for the work list go too: the next worker reads their outcomes.
    for (const batchId of this.awaiting.keys()) this.finished.push({ batchId, update: null });
    this.awaiting.clear();
    if (this.finished.length > 0) {
      await this.round(0).catch((error: unknown) => this.options.logger?.warn({ err: error }, 'pass delivery worker: cannot record the last batches; they come due again'));
    }
    await this.dropLockClient();
  }

  /**
   * Runs rounds while there is work and room (a batch that waits on a slow provider holds up no
   * other), then sleeps until poked (scheduled work, a batch finished), or for the poll interval.
   */
  private async loop(): Promise<void> {
    const concurrency = this.options.concurrency ?? 64;
    while (!this.stopping) {
      this.wanted = false;
      let claimed = 0;
      let room = 0;
      let failed = false;
      try {
        this.letGoOfOverdue();
        room = concurrency - (this.inFlight.size - this.finished.length);
        claimed = await this.round(room);
      } catch (error) {
        failed = true;
        this.options.logger?.warn({ err: error }, 'pass delivery worker: cannot read the work list; trying again');
      }
      if (!failed && ((claimed > 0 && claimed === room) || this.stopping || this.wanted)) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.options.pollIntervalMs ?? 1000);
        timer.unref();
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
    }
  }

  /** Batches whose recorded outcomes the work list took in: let go of at the next round. */
  private takenInByList(batchIds: readonly string[]): void {
    let any = false;
    for (const batchId of batchIds) {
      if (this.awaiting.delete(batchId)) {
        this.finished.push({ batchId, update: null });
        any = true;
      } else if (this.inFlight.has(batchId)) {
        this.takenIn.add(batchId); // recorded, and taken in before this worker got round to holding it
      }
    }
    if (any) this.poke();
  }

  private letGoOfOverdue(): void {
    const overdue = Date.now() - WORK_LIST_WAIT_MS;
    for (const [batchId, since] of this.awaiting) {
      if (since > overdue) continue;
      this.awaiting.delete(batchId);
      this.finished.push({ batchId, update: null });
    }
  }

  /**
   * One round trip: the rows of the batches finished since the last round are written where
   * that is this worker's to do (one short transaction, rarely needed), their locks go, then up
   * to `room` due batches are locked, and work on them starts. Returns how many were locked.
   */
  private async round(room: number): Promise<number> {
    const finished = this.finished.splice(0);
    const statements: string[] = [];
    const updates = finished.flatMap((f) => (f.update ? [f.update] : []));
    if (updates.length > 0) {
      // A row lost with a server crash is only looked at again: the log says what was recorded.
      statements.push('BEGIN', 'SET LOCAL synchronous_commit = off', updateJobsStatement(updates), 'COMMIT');
    }
    if (finished.length > 0) {
      // After the COMMIT: whoever locks one of these next sees its row as written.
      statements.push(`SELECT pg_advisory_unlock(${BATCH_LOCK_SPACE}, hashtext(b)) FROM unnest(${textArray(finished.map((f) => f.batchId))}) AS b`);
    }
    const claiming = room > 0 && !this.stopping;
    // A session may take a lock it holds again: batches in hand are left out by id.
    if (claiming) statements.push(claimStatement(room, [...this.inFlight.keys()], this.now()));
    if (statements.length === 0) return 0;
    let results: pg.QueryResult | pg.QueryResult[];
    try {
      const client = await this.locks();
      results = await this.onLockClient(() => client.query(statements.join(';\n')) as unknown as Promise<pg.QueryResult | pg.QueryResult[]>);
    } catch (error) {
      this.finished.unshift(...finished); // written with the next round (the writes are idempotent)
      throw error;
    }
    for (const f of finished) {
      this.inFlight.delete(f.batchId);
      this.takenIn.delete(f.batchId);
    }
    if (!claiming) return 0;
    const jobs = (Array.isArray(results) ? results.at(-1)! : results).rows as DueJob[];
    if (jobs.length > 0) this.begin(jobs);
    return jobs.length;
  }

  /** Starts on the batches a round locked: what they need is read for all of them at once. */
  private begin(jobs: readonly DueJob[]): void {
    const prepared = this.prepare(jobs);
    for (const job of jobs) {
      const batchId = job.batch_id;
      const work = prepared
        .then((all) => this.deliver(all.get(batchId)!))
        .then(
          (delivered) => {
            if (delivered.kind === 'finished') {
              this.finished.push({ batchId, update: delivered.update });
              this.poke();
            } else if (this.takenIn.has(batchId)) {
              this.finished.push({ batchId, update: null });
              this.poke();
            } else {
              this.awaiting.set(batchId, Date.now());
            }
          },
          (error: unknown) => {
            // Left due: a later round tries again (the log says what was already recorded). Not
            // at once: what failed (the store, the key store) may need a moment.
            this.options.logger?.warn({ err: error, batchId }, 'pass delivery worker: a batch failed; trying again');
            this.finished.push({ batchId, update: null });
          },
        );
      this.inFlight.set(job.batch_id, work);
    }
  }

  /** The batches' delivery streams (one read), keys (one query, or none) and facility names. */
  private async prepare(jobs: readonly DueJob[]): Promise<Map<string, Prepared>> {
    const { store, subjectKeys } = this.options;
    // What was recorded is what counts (a replay, another worker, a crash after a send).
    const [logs, keys, names] = await Promise.all([
      store.readStreams(jobs.map((job) => ({ streamName: streams.passDelivery(job.batch_id) }))),
      subjectKeys.getMany(jobs.map((job) => job.pass.guest.keyId)),
      this.facilityNamesOf(jobs.map((job) => job.pass.facilityId)),
    ]);
    return new Map(
      jobs.map((job, i) => {
        const events = logs[i] ?? [];
        const prepared: Prepared = {
          job,
          events,
          state: fold(passDeliveryDecider, events as never[]),
          revision: events.at(-1)?.revision ?? 'no_stream',
          key: keys.get(job.pass.guest.keyId) ?? null,
          facility: names.get(job.pass.facilityId) ?? UNKNOWN_FACILITY,
        };
        return [job.batch_id, prepared];
      }),
    );
  }

  private async deliver({ job, events, state, revision, key, facility }: Prepared): Promise<Delivered> {
    const pass = job.pass;
    const now = this.now();
    const batchId = job.batch_id;
    // A retry comes due by the row; that the pause is over is the log's to say (a batch let go of
    // before the list took its outcome in may be looked at early).
    const notBefore = retryNotBefore(events, state);
    if (notBefore && notBefore.getTime() > now.getTime()) return { kind: 'finished', update: { batch_id: batchId, done: false, next_attempt_at: notBefore } };
    const guest = key ? open<GuestDetails>(key, pass.guest) : null;
    const steps = planDelivery({
      state,
      contact: guest ? { email: guest.email !== null, phone: guest.phone !== null } : null,
      validUntil: pass.validUntil,
      now,
    });

    const content = guest?.passLinkToken && steps.some((s) => s.action === 'send') ? { ...this.content(pass, guest, guest.passLinkToken, facility), round: state.round } : null;
    const outcomes = await Promise.all(steps.map(async (step) => ({ step, outcome: await this.attempt(step, guest, content, batchId) })));
    // Settled already (a replay, another worker): no event will take it off the list.
    if (outcomes.length === 0) return { kind: 'finished', update: { batch_id: batchId, done: true, next_attempt_at: null } };
    let recorded: DeliveryReport;
    try {
      recorded = await this.record(job, outcomes, state, revision);
    } catch (error) {
      // Sent but not recorded: coming due again at once would send again and again while the
      // event store is down. Later, the one repeat the guarantee allows.
      this.options.logger?.warn({ err: error, batchId }, 'pass delivery worker: cannot record an outcome; trying again later');
      return { kind: 'finished', update: { batch_id: batchId, done: false, next_attempt_at: new Date(now.getTime() + RECORD_FAILURE_PAUSE_MS) } };
    }
    this.options.onRecorded?.(batchId, recorded);
    // Nothing new recorded (another worker got there first): looked at again, on what the log says.
    if (!recorded.position) return { kind: 'finished', update: null };
    return { kind: 'recorded' };
  }

  private async attempt(step: PlannedStep, guest: GuestDetails | null, content: PassMessageContent | null, batchId: string): Promise<DeliveryOutcome> {
    if (step.action === 'give_up') return { kind: 'failed', errorClass: step.errorClass, final: true };
    if (!guest || !content) return { kind: 'failed', errorClass: 'guest_erased', final: true };
    const { baseUrl } = this.options;
    try {
      if (step.channel === 'email') {
        const mail = composePassEmail(content, guest.email!, { from: this.options.mailFrom, publicBaseUrl: baseUrl });
        const receipt = await this.options.mail.send(mail);
        return { kind: 'sent', messageId: mail.messageId, providerMessageId: receipt.providerMessageId };
      }
      const sms = composePassSms(content, guest.phone!, { publicBaseUrl: baseUrl });
      const receipt = await this.options.sms.send(sms);
      return { kind: 'sent', messageId: sms.idempotencyKey, providerMessageId: receipt.providerMessageId };
    } catch (error) {
      const failure = error instanceof DeliveryFailure ? error : null;
      const errorClass = failure?.errorClass ?? 'provider_unavailable';
      const final = (failure?.permanent ?? false) || isLastAttempt(step.attempt);
      // The error's class and message only: adapters keep recipients out of them, and an unknown
      // error is logged by name, since its message might quote one.
      this.options.logger?.warn(
        { batchId, channel: step.channel, attempt: step.attempt, errorClass, final, error: failure ? failure.message : errorName(error) },
        'pass delivery attempt failed',
      );
      return { kind: 'failed', errorClass, final };
    }
  }

  private content(pass: PassCreated['data'], guest: GuestDetails, token: string, facility: FacilityFacts): PassMessageContent {
    return {
      batchId: pass.batchId,
      guestFirstName: guest.firstName,
      facilityName: facility.name,
      timeZone: facility.timeZone,
      arrivalDate: pass.arrivalDate,
      arrivalTime: pass.arrivalTime,
      validFrom: pass.validFrom,
      validUntil: pass.validUntil,
      invitedBy: guest.invitedBy,
      passLink: `${this.options.baseUrl}/p/${token}`,
      passCount: pass.batchSize,
    };
  }

  /** The facilities' names and zones: remembered a while, the others read in one query. */
  private async facilityNamesOf(facilityIds: readonly number[]): Promise<Map<number, FacilityFacts>> {
    const names = new Map<number, FacilityFacts>();
    const missing = new Set<number>();
    for (const id of facilityIds) {
      const known = this.facilityNames.get(id);
      if (known && known.until > Date.now()) names.set(id, known.facts);
      else missing.add(id);
    }
    if (missing.size === 0) return names;
    const rows = await this.options
      .knex(READ_MODELS.facilities)
      .whereIn('facility_id', [...missing])
      .select<Array<{ facility_id: number; name: string; time_zone: string | null }>>('facility_id', 'name', 'time_zone');
    if (this.facilityNames.size >= 10_000) this.facilityNames.clear();
    for (const id of missing) {
      const row = rows.find((r) => Number(r.facility_id) === id);
      const facts = row ? { name: row.name, timeZone: row.time_zone ?? DEFAULT_TIME_ZONE } : UNKNOWN_FACILITY;
      this.facilityNames.set(id, { facts, until: Date.now() + FACILITY_NAME_TTL_MS });
      names.set(id, facts);
    }
    return names;
  }

  /**
   * Appends the round's outcomes, deciding on the stream as read before the sends (the expected
   * revision proves it unchanged); the stream's state and position after them.
   */
  private async record(
    job: DueJob,
    outcomes: ReadonlyArray<{ step: PlannedStep; outcome: DeliveryOutcome }>,
    state: PassDeliveryState,
    revision: number | 'no_stream',
  ): Promise<DeliveryReport> {
    const pass = job.pass;
    const ctx: CommandContext = {
      correlationId: job.correlation_id,
      causationId: job.event_id,
      actor: { kind: 'system', name: 'pass-delivery' },
      now: this.now(),
    };
    const result = await this.options.handler.handle(
      streams.passDelivery(pass.batchId),
      passDeliveryDecider,
      {
        type: 'RecordDeliveryOutcomes',
        data: { batchId: pass.batchId, orgId: pass.orgId, round: state.round, attempts: outcomes.map(({ step, outcome }) => ({ channel: step.channel, attempt: step.attempt, outcome })) },
      },
      ctx,
      { known: { state, revision } },
    );
    return { state: result.state, position: result.events.length > 0 ? result.position : null };
  }

  /** The lock connection runs one query at a time (pg queues them, but warns): chain them. */
  private onLockClient<T>(query: () => Promise<T>): Promise<T> {
    const result = this.lockQueue.then(query);
    this.lockQueue = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  /** The worker's own connection: its session holds the batches' locks and hears new work scheduled. */
  private async locks(): Promise<pg.Client> {
    if (this.lockClient) return this.lockClient;
    const client = (await this.options.knex.client.acquireRawConnection()) as pg.Client;
    const lost = () => {
      if (this.lockClient !== client) return;
      this.lockClient = null; // its locks went with it
      this.poke(); // work scheduled meanwhile went unheard
    };
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', (message) => {
      if (message.channel === DELIVERY_DUE_CHANNEL && message.payload !== SCHEDULING_PROCESS) this.poke();
      // Another process's runner took outcomes in (this process's tells directly; hearing it again changes nothing).
      if (message.channel === DELIVERY_NOTIFY_CHANNEL && message.payload) this.takenInByList(message.payload.split(' '));
    });
    await client.query(`LISTEN ${DELIVERY_DUE_CHANNEL}; LISTEN ${DELIVERY_NOTIFY_CHANNEL}`);
    this.lockClient = client;
    return client;
  }

  private async dropLockClient(): Promise<void> {
    const client = this.lockClient;
    this.lockClient = null;
    await client?.end().catch(() => undefined);
  }
}

function textArray(values: readonly string[]): string {
  return `${sqlLiteral(`{${values.map((v) => `"${v.replace(/["\\]/g, '\\$&')}"`).join(',')}}`)}::text[]`;
}

/** When the latest transient failure of a channel still pending lets the next attempt go (null: nothing to wait for). */
function retryNotBefore(events: readonly RecordedEvent[], state: PassDeliveryState): Date | null {
  let notBefore: Date | null = null;
  // Only the current round's failures count: a resend starts its channels afresh.
  const roundStart = events.findLastIndex((e) => e.type === 'PassMessageResendRequested') + 1;
  for (const event of events.slice(roundStart)) {
    if (event.type !== 'PassDeliveryFailed') continue;
    const data = event.data as PassDeliveryFailed['data'];
    if (data.final || state[data.channel].status !== 'pending' || data.attempt < state[data.channel].attempts) continue;
    const at = nextAttemptAt(data.attempt, new Date(event.metadata.occurredAt));
    if (!notBefore || at > notBefore) notBefore = at;
  }
  return notBefore;
}

/** Locks up to `room` due batches (not those in hand) and returns them. */
function claimStatement(room: number, inHand: readonly string[], now: Date): string {
  return `WITH due AS (
       SELECT batch_id FROM pass_delivery_jobs
       WHERE NOT done AND next_attempt_at <= ${sqlLiteral(now.toISOString())}::timestamptz AND batch_id <> ALL(${textArray(inHand)})
       ORDER BY next_attempt_at LIMIT ${Math.trunc(room)}
     )
     SELECT j.batch_id, j.pass, j.event_id::text AS event_id, j.correlation_id
     FROM due JOIN pass_delivery_jobs j USING (batch_id)
     WHERE pg_try_advisory_lock(${BATCH_LOCK_SPACE}, hashtext(due.batch_id))`;
}

function errorName(error: unknown): string {
  if (error instanceof Error) return (error as Error & { code?: string }).code ?? error.name;
  return typeof error;
}
