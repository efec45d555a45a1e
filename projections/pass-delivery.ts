// Pass delivery as a process runs it: the worker that sends, over the channels the configuration
// names. The scheduler that puts new batches on its work list runs inside the projection runner
// (pass-delivery-reactor.ts), which every process that delivers runs too; the worker hears of new
// work by NOTIFY (`pass_delivery_due`) from whichever runner scheduled it. Used by the projections
// process, `npm start` and the test stack. Each also deletes the work list's rows a week after
// they were done (pass-delivery-retention.ts).
import type { Knex } from 'knex';
import type { Logger } from '../shared/logger.js';
import type { EventStore } from '../shared/event-store/event-store.js';
import type { CommandHandler } from '../shared/event-store/command-handler.js';
import type { SubjectKeyStore } from '../shared/crypto/subject-keys.js';
import type { MailSender, SmsSender } from '../shared/delivery/delivery-ports.js';
import type { DeliveryReport } from '../shared/delivery/delivery-outcomes.js';
import type { Config } from '../shared/config.js';
import type { Runtime } from '../runtime/runtime.js';
import { createDeliverySenders } from '../shared/delivery/create-senders.js';
import { PassDeliveryWorker } from './pass-delivery-worker.js';
import { sweepDoneJobs } from './pass-delivery-retention.js';
import { InvitationMailWorker } from './invitation-mail-worker.js';

export interface PassDeliveryDeps {
  readonly knex: Knex;
  readonly store: EventStore;
  readonly handler: CommandHandler;
  readonly subjectKeys: SubjectKeyStore;
  readonly senders: { readonly mail: MailSender; readonly sms: SmsSender; readonly mailFrom: string; describe?(): string };
  /** The address guests reach the service at: the pass links. */
  readonly baseUrl: string;
  readonly logger?: Logger;
  /** Told of each batch whose outcome was recorded here (an in-process create waits on it). */
  readonly onRecorded?: (batchId: string, report: DeliveryReport) => void;
  readonly pollIntervalMs?: number;
}

export interface RunningPassDelivery {
  readonly worker: PassDeliveryWorker;
  /** Which channels are in use, for a start-up line (no credentials). */
  readonly description: string;
  /** Finishes the batches in hand, closes the channels. */
  stop(): Promise<void>;
}

/** Pass delivery of a service process: the channels its configuration names (else the outbox folder). */
export function startConfiguredPassDelivery(
  runtime: Pick<Runtime, 'knex' | 'store' | 'deps'>,
  config: Config,
  options: { readonly baseUrl: string; readonly logger: Logger; readonly onRecorded?: (batchId: string, report: DeliveryReport) => void },
): Promise<RunningPassDelivery> {
  return startPassDelivery({
    knex: runtime.knex,
    store: runtime.store,
    handler: runtime.deps.handler,
    subjectKeys: runtime.deps.subjectKeys,
    senders: createDeliverySenders(config, options.baseUrl),
    ...options,
  });
}

export async function startPassDelivery(deps: PassDeliveryDeps): Promise<RunningPassDelivery> {
  const worker = new PassDeliveryWorker({
    knex: deps.knex,
    store: deps.store,
    handler: deps.handler,
    subjectKeys: deps.subjectKeys,
    mail: deps.senders.mail,
    sms: deps.senders.sms,
    mailFrom: deps.senders.mailFrom,
    baseUrl: deps.baseUrl,
    logger: deps.logger,
    onRecorded: deps.onRecorded,
    pollIntervalMs: deps.pollIntervalMs,
  });
  worker.start();
  // Invitation emails go out over the same mail channel (the console's invitations).
  const invitationMail = new InvitationMailWorker({
    knex: deps.knex,
    store: deps.store,
    mail: deps.senders.mail,
    mailFrom: deps.senders.mailFrom,
    baseUrl: deps.baseUrl,
    logger: deps.logger,
    pollIntervalMs: deps.pollIntervalMs,
  });
  invitationMail.start();
  const stopSweeping = sweepDoneJobs(deps.knex, deps.logger);
  return {
    worker,
    description: deps.senders.describe?.() ?? `mail: ${deps.senders.mail.kind}; sms: ${deps.senders.sms.kind}`,
    async stop() {
      await stopSweeping();
      await Promise.all([worker.stop(), invitationMail.stop()]);
      await Promise.all([deps.senders.mail.close(), deps.senders.sms.close()]);
    },
  };
}
