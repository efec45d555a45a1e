// Pass delivery outcomes, read from the read model when /metrics is scraped: how many batches'
// email and SMS are sent, failed or still pending (pass_batches.email_delivery / sms_delivery).
import type { Knex } from 'knex';
import { Gauge } from 'prom-client';
import { READ_MODELS } from '../db/read-models.js';
import { metricsRegistry, onScrape } from './registry.js';

const deliveries = new Gauge({
  name: 'guestpass_pass_deliveries',
  help: 'Pass batches by delivery channel (email, sms) and outcome (sent, failed, pending), from the pass_batches read model.',
  labelNames: ['channel', 'outcome'] as const,
  registers: [metricsRegistry],
});

const CHANNELS = ['email', 'sms'] as const;
const OUTCOMES = ['sent', 'failed', 'pending'] as const;

/** Fills the gauge on every scrape until the returned function is called. */
export function observeDeliveryOutcomes(knex: Knex): () => void {
  return onScrape(async () => {
    deliveries.reset();
    const { rows } = await knex.raw<{ rows: Array<{ channel: string; outcome: string; n: string }> }>(
      `SELECT 'email' AS channel, email_delivery AS outcome, count(*)::text AS n FROM ?? WHERE email_delivery IS NOT NULL GROUP BY email_delivery
       UNION ALL
       SELECT 'sms', sms_delivery, count(*)::text FROM ?? WHERE sms_delivery IS NOT NULL GROUP BY sms_delivery`,
      [READ_MODELS.passBatches, READ_MODELS.passBatches],
    );
    // Every known series is shown, 0 when no batch has it, so rates work from the first scrape.
    for (const channel of CHANNELS) for (const outcome of OUTCOMES) deliveries.set({ channel, outcome }, 0);
    for (const row of rows) deliveries.set({ channel: row.channel, outcome: row.outcome }, Number(row.n));
  });
}
