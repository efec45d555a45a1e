// The floor under create-with-delivery (issue 15): what the delivery transports alone cost, with
// no service around them. Each pair is the email and SMS the delivery worker would send for one
// batch, composed the same way (pass-message.ts) and sent through the same sender classes (the
// SMTP pool, the webhook over node:http) to the same local providers the bench starts, with
// `concurrency` pairs in flight. Its machine CPU per pair is what no change to the service can
// take off a delivered create; the bench prints it beside the two stack runs.
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { machineCpuSeconds, processCpuSeconds } from './oauth-bench/machine-cpu.js';
import { SmtpMailSender } from '../shared/delivery/smtp-mail-sender.js';
import { SmsWebhookSender } from '../shared/delivery/sms-webhook-sender.js';
import { composePassEmail, composePassSms, type PassMessageContent } from '../shared/delivery/pass-message.js';

export interface DeliveryFloor {
  readonly pairs: number;
  readonly pairsPerSecond: number;
  /** This process's CPU per pair (the senders' side), ms. */
  readonly processMsPerPair: number;
  /** The providers' process's CPU per pair, ms (NaN when its pid is not known). */
  readonly providersMsPerPair: number;
  /** The whole machine's busy CPU per pair (senders and providers), ms; NaN without /proc/stat. */
  readonly machineMsPerPair: number;
  /** Share of the machine's cores busy over the window, %. */
  readonly machineBusyPercent: number;
}

/** The bench's providers, as its `--providers` process reports them. */
export interface ProviderUrls {
  readonly smtpUrl: string;
  readonly smsUrl: string;
  /** Their process, whose CPU is counted apart from the machine's (other work on a shared machine). */
  readonly pid?: number;
}

const BASE_URL = 'http://127.0.0.1:3000';
const MAIL_FROM = 'Guest Pass <no-reply@example.test>';

/** A batch as the bench creates it: one pass for "Bench" at the seeded facility, arriving tomorrow. */
function content(batchId: string): PassMessageContent {
  const day = new Date(Date.now() + 86_400_000);
  const date = day.toISOString().slice(0, 10);
  return {
    batchId,
    guestFirstName: 'Bench',
    facilityName: 'Main entrance',
    arrivalDate: date,
    arrivalTime: null,
    timeZone: 'UTC',
    validFrom: `${date}T00:00:00.000Z`,
    validUntil: `${date}T23:59:59.000Z`,
    invitedBy: null,
    passLink: `${BASE_URL}/p/${randomUUID()}`,
    passCount: 1,
  };
}

/**
 * Sends pairs for `warmupMs` (JIT, connections), then measures for `seconds`. The senders are made
 * as the bench's delivery stack makes them (4 SMTP connections) and closed after.
 */
export async function measureDeliveryFloor(providers: ProviderUrls, options: { concurrency: number; seconds: number; warmupMs: number }): Promise<DeliveryFloor> {
  const mail = new SmtpMailSender(providers.smtpUrl, { maxConnections: 4 });
  const sms = new SmsWebhookSender({ url: providers.smsUrl, authToken: null });
  const sendPair = async (): Promise<void> => {
    const c = content(randomUUID());
    const email = composePassEmail(c, 'bench@example.com', { from: MAIL_FROM, publicBaseUrl: BASE_URL });
    const text = composePassSms(c, '+15551234567', { publicBaseUrl: BASE_URL });
    await Promise.all([mail.send(email), sms.send(text)]);
  };
  const run = async (ms: number): Promise<number> => {
    const until = performance.now() + ms;
    let pairs = 0;
    await Promise.all(
      Array.from({ length: options.concurrency }, async () => {
        while (performance.now() < until) {
          await sendPair();
          pairs++;
        }
      }),
    );
    return pairs;
  };
  try {
    await run(options.warmupMs);
    const providerPids = providers.pid === undefined ? [] : [providers.pid];
    const providersBefore = processCpuSeconds(providerPids);
    const cpuBefore = process.cpuUsage();
    const machineBefore = machineCpuSeconds();
    const started = performance.now();
    const pairs = await run(options.seconds * 1000);
    const elapsed = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const machineAfter = machineCpuSeconds();
    const providersAfter = processCpuSeconds(providerPids);
    const providersCpu = providers.pid === undefined ? NaN : (providersAfter.get(providers.pid) ?? NaN) - (providersBefore.get(providers.pid) ?? NaN);
    const machineBusy = machineBefore && machineAfter ? machineAfter.busy - machineBefore.busy : NaN;
    return {
      pairs,
      pairsPerSecond: pairs / elapsed,
      processMsPerPair: (cpu.user + cpu.system) / 1000 / Math.max(1, pairs),
      providersMsPerPair: (providersCpu * 1000) / Math.max(1, pairs),
      machineMsPerPair: (machineBusy * 1000) / Math.max(1, pairs),
      machineBusyPercent: (100 * machineBusy) / (elapsed * os.cpus().length),
    };
  } finally {
    await Promise.all([mail.close(), sms.close()]);
  }
}
