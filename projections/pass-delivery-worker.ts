// The pass delivery reactor's second half: takes due batches off the work list
// (pass_delivery_jobs), sends each pending channel's one message, and records every attempt's
// outcome as an event on the batch's delivery stream (pass-delivery-decider.ts).
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
import type { Knex } from 'knex';
import type pg from 'pg';
import type { Logger } from '../shared/logger.js';
import { fold } from '../shared/domain/decider.js';
import { streams, type GuestDetails, type PassCreated } from '../shared/domain/events.js';
import { passDeliveryDecider, type DeliveryOutcome } from '../shared/domain/pass-delivery-decider.js';
import { isLastAttempt, nextAttemptAt, planDelivery, type PlannedStep } from '../shared/domain/delivery-plan.js';
import type { CommandHandler, CommandContext } from '../shared/event-store/command-handler.js';
import type { EventStore } from '../shared/event-store/event-store.js';
import type { JobRow } from './pass-delivery-reactor.js';
import type { SubjectKeyStore } from '../shared/crypto/subject-keys.js';
import { open } from '../shared/crypto/sealed-box.js';
import { READ_MODELS } from '../shared/db/read-models.js';
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
  /** Batches worked on at once (default 32). */
  readonly concurrency?: number;
  /** Test seam: the clock. */
  readonly now?: () => Date;
}

type DueJob = Pick<JobRow, 'batch_id' | 'pass' | 'event_id' | 'correlation_id'>;

/** How long a facility's name is taken as known (a rename shows in messages after this). */
const FACILITY_NAME_TTL_MS = 60_000;

/** How long a batch whose outcome could not be recorded waits before it is tried again. */
const RECORD_FAILURE_PAUSE_MS = 60_000;

/** Namespace of the advisory locks on batches (the second key is the batch id's hashtext). */
const BATCH_LOCK_SPACE = 7_302_517;

export class PassDeliveryWorker {
  private lockClient: pg.Client | null = null;
  private lockQueue: Promise<void> = Promise.resolve();
  /** Batches done, their locks still held until the next round lets go of them. */
  private readonly toRelease: string[] = [];
  private readonly facilityNames = new Map<number, { readonly name: string; readonly until: number }>();
  /** Batches being worked on, by id. */
  private readonly inFlight = new Map<string, Promise<void>>();
  private running: Promise<void> | null = null;
  private stopping = false;
  private wake: (() => void) | null = null;
  private wanted = false;
  private readonly now: () => Date;

  constructor(private readonly options: PassDeliveryWorkerOptions) {
    this.now = options.now ?? (() => new Date());
  }

  start(): void {
    if (this.running) throw new Error('pass delivery worker already started');
    this.running = this.loop();
  }

  /** Looks at the work list now (new work was scheduled in this process). */
  poke(): void {
    this.wanted = true;
    this.wake?.();
  }

  /** Finishes the batches in hand, then lets go of its locks. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.running;
    this.running = null;
    await Promise.all(this.inFlight.values());
    await this.dropLockClient();
  }

  /**
   * Claims due batches while it has room (a batch that waits on a slow provider holds up no
   * other), then sleeps until poked, until a batch ends, or for the poll interval.
   */
  private async loop(): Promise<void> {
    const concurrency = this.options.concurrency ?? 32;
    while (!this.stopping) {
      this.wanted = false;
      let claimed = 0;
      let room = 0;
      try {
        await this.release();
        room = concurrency - this.inFlight.size;
        if (room > 0) claimed = await this.claim(room);
      } catch (error) {
        this.options.logger?.warn({ err: error }, 'pass delivery worker: cannot read the work list; trying again');
        await this.dropLockClient();
      }
      if ((claimed > 0 && claimed === room) || this.stopping || this.wanted) continue;
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

  /** Locks up to `room` due batches and starts on each; returns how many. */
  private async claim(room: number): Promise<number> {
    const client = await this.locks();
    // A session may take a lock it holds again: batches in hand are left out by id.
    const { rows } = await this.onLockClient(() =>
      client.query<DueJob>(
        `WITH due AS (
           SELECT batch_id FROM pass_delivery_jobs
           WHERE NOT done AND next_attempt_at <= $1 AND batch_id <> ALL($4::text[])
           ORDER BY next_attempt_at LIMIT $2
         )
         SELECT j.batch_id, j.pass, j.event_id::text AS event_id, j.correlation_id
         FROM due JOIN pass_delivery_jobs j USING (batch_id)
         WHERE pg_try_advisory_lock($3, hashtext(due.batch_id))`,
        [this.now(), room, BATCH_LOCK_SPACE, [...this.inFlight.keys()]],
      ),
    );
    for (const job of rows) {
      const work = this.deliver(job)
        .catch((error: unknown) => {
          // Left due: a later round tries again (the log says what was already recorded).
          this.options.logger?.warn({ err: error, batchId: job.batch_id }, 'pass delivery worker: a batch failed; trying again');
        })
        .finally(() => {
          // Released with the next round's claim (one statement for all the batches done by then);
          // held and left out of claims until then.
          this.toRelease.push(job.batch_id);
          this.poke();
        });
      this.inFlight.set(job.batch_id, work);
    }
    return rows.length;
  }

  /** Lets go of the batches done since the last round, in one statement. */
  private async release(): Promise<void> {
    if (this.toRelease.length === 0) return;
    const done = this.toRelease.splice(0);
    const client = this.lockClient;
    if (client) {
      await this.onLockClient(() =>
        client.query('SELECT pg_advisory_unlock($1, hashtext(b)) FROM unnest($2::text[]) AS b', [BATCH_LOCK_SPACE, done]),
      ).catch(() => undefined); // a lost connection took its locks with it
    }
    for (const batchId of done) this.inFlight.delete(batchId);
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

  private async deliver(job: DueJob): Promise<void> {
    const { store, knex } = this.options;
    const pass = job.pass;
    // What was recorded is what counts (a replay, another worker, a crash after a send).
    const deliveryEvents = await store.readStream(streams.passDelivery(job.batch_id));
    const state = fold(passDeliveryDecider, deliveryEvents as never[]);
    const guest = await this.openGuest(pass);
    const now = this.now();
    const steps = planDelivery({
      state,
      contact: guest ? { email: guest.email !== null, phone: guest.phone !== null } : null,
      validUntil: pass.validUntil,
      now,
    });

    const content = guest?.passLinkToken && steps.some((s) => s.action === 'send') ? await this.content(pass, guest, guest.passLinkToken) : null;
    const outcomes = await Promise.all(steps.map(async (step) => ({ step, outcome: await this.attempt(step, guest, content, job.batch_id) })));
    let recorded: DeliveryReport | null = null;
    if (outcomes.length > 0) {
      try {
        recorded = await this.record(job, outcomes);
      } catch (error) {
        // Sent but not recorded: coming due again at once would send again and again while the
        // event store is down. Later, the one repeat the guarantee allows.
        await knex('pass_delivery_jobs')
          .where({ batch_id: job.batch_id })
          .update({ next_attempt_at: new Date(now.getTime() + RECORD_FAILURE_PAUSE_MS), updated_at: knex.fn.now() })
          .catch(() => undefined);
        throw error;
      }
    }

    // A transient failure is tried again later (all channels of a batch keep in step); anything
    // else leaves nothing to do.
    const retryAttempt = outcomes.find(({ outcome }) => outcome.kind === 'failed' && !outcome.final)?.step.attempt;
    // The work list and the waiters of other processes in one statement.
    await knex.raw(
      `WITH job AS (
         UPDATE pass_delivery_jobs SET done = ?, next_attempt_at = coalesce(?, next_attempt_at), updated_at = now() WHERE batch_id = ? RETURNING batch_id
       )
       SELECT pg_notify(?, batch_id) FROM job WHERE ?`,
      [retryAttempt === undefined, retryAttempt === undefined ? null : nextAttemptAt(retryAttempt, now), job.batch_id, DELIVERY_NOTIFY_CHANNEL, outcomes.length > 0],
    );
    if (recorded) this.options.onRecorded?.(job.batch_id, recorded);
  }

  /** The guest's details, or null when the batch's key is gone (erased). */
  private async openGuest(pass: PassCreated['data']): Promise<GuestDetails | null> {
    const keys = await this.options.subjectKeys.getMany([pass.guest.keyId]);
    const key = keys.get(pass.guest.keyId);
    return key ? open<GuestDetails>(key, pass.guest) : null;
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

  private async content(pass: PassCreated['data'], guest: GuestDetails, token: string): Promise<PassMessageContent> {
    return {
      batchId: pass.batchId,
      guestFirstName: guest.firstName,
      facilityName: await this.facilityName(pass.facilityId),
      arrivalDate: pass.arrivalDate,
      arrivalTime: pass.arrivalTime,
      validFrom: pass.validFrom,
      validUntil: pass.validUntil,
      invitedBy: guest.invitedBy,
      passLink: `${this.options.baseUrl}/p/${token}`,
      passCount: pass.batchSize,
    };
  }

  private async facilityName(facilityId: number): Promise<string> {
    const known = this.facilityNames.get(facilityId);
    if (known && known.until > Date.now()) return known.name;
    const row = await this.options.knex(READ_MODELS.facilities).where({ facility_id: facilityId }).first<{ name: string } | undefined>('name');
    const name = row?.name ?? 'the facility';
    if (this.facilityNames.size >= 10_000) this.facilityNames.clear();
    this.facilityNames.set(facilityId, { name, until: Date.now() + FACILITY_NAME_TTL_MS });
    return name;
  }

  /** Appends the round's outcomes; the stream's state and position after them. */
  private async record(job: DueJob, outcomes: ReadonlyArray<{ step: PlannedStep; outcome: DeliveryOutcome }>): Promise<DeliveryReport> {
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
        data: { batchId: pass.batchId, orgId: pass.orgId, attempts: outcomes.map(({ step, outcome }) => ({ channel: step.channel, attempt: step.attempt, outcome })) },
      },
      ctx,
    );
    return { state: result.state, position: result.events.length > 0 ? result.position : null };
  }

  private async locks(): Promise<pg.Client> {
    if (this.lockClient) return this.lockClient;
    const client = (await this.options.knex.client.acquireRawConnection()) as pg.Client;
    client.on('error', () => {
      if (this.lockClient === client) this.lockClient = null; // its locks went with it
    });
    this.lockClient = client;
    return client;
  }

  private async dropLockClient(): Promise<void> {
    const client = this.lockClient;
    this.lockClient = null;
    await client?.end().catch(() => undefined);
  }
}

function errorName(error: unknown): string {
  if (error instanceof Error) return (error as Error & { code?: string }).code ?? error.name;
  return typeof error;
}
