// Runs the projection runner alone: `node dist/projections/main.js`, configured by the
// environment (shared/config.ts: DATABASE_URL, EVENTSTORE_URL, LOG_LEVEL, ...). Several of these
// processes may run at once: checkpoints are locked per batch, so they never apply an event twice;
// one of them forwards pass events to Kafka at a time.
import { loadConfig } from '../shared/config.js';
import { createLogger } from '../shared/logger.js';
import { describeStartupError } from '../shared/startup-error.js';
import { openRuntime } from '../runtime/runtime.js';
import { runService } from '../shared/http/serve.js';
import { databaseCheck, eventStoreCheck, kafkaCheck, type ReadinessCheck } from '../shared/http/readiness.js';
import { observeDeliveryOutcomes } from '../shared/metrics/delivery-metrics.js';
import { observeLogLag } from './lag-metrics.js';
import { ProjectionRunner } from './runner.js';
import { runPassEventForwarder } from './pass-event-forwarder-role.js';
import { KafkaPassBus } from '../shared/pass-bus/kafka-pass-bus.js';
import { startConfiguredPassDelivery } from './pass-delivery.js';
import { defaultBaseUrl } from '../runtime/base-url.js';
import { keyEncryptionKey } from '../runtime/runtime.js';
import { runAuditNotary } from './audit-notary-role.js';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, 'projections', config.logFormat);
  // Its port serves only /healthz, /readyz and /metrics (read-model and reactor lag, delivery outcomes).
  await runService({ config, logger, name: 'projections' }, async () => {
    // What has started, stopped in reverse (the batch in flight finishes first); a failed start stops it too.
    const started: Array<() => Promise<void>> = [];
    const close = async () => {
      for (const stop of started.splice(0).reverse()) await stop();
    };
    try {
      // DATABASE_URL, else the embedded server a running `npm start` recorded, else an embedded one;
      // migrates, and builds the event store (createEventStore) and the subject key store.
      const runtime = await openRuntime(config, logger);
      started.push(() => runtime.close());
      const runner = new ProjectionRunner({
        knex: runtime.knex,
        store: runtime.store,
        subjectKeys: runtime.deps.subjectKeys,
        contactHasher: runtime.contactHasher, // the members' email and phone search hashes
        logger,
      });
      await runner.start();
      started.push(() => runner.stop());
      logger.info({ projections: runner.status().map((p) => p.name) }, 'projection runner started');
      const checks: ReadinessCheck[] = [databaseCheck(runtime.knex), eventStoreCheck(runtime.store)];
      // With Kafka configured, this process also forwards pass events to it for the door-gateway.
      // (Without it, the embedded runner forwards into its in-process bus itself.)
      if (config.kafkaBrokers.length > 0) {
        const bus = new KafkaPassBus({
          brokers: config.kafkaBrokers,
          passTopicPartitions: config.kafkaPassTopicPartitions,
          topicPrefix: config.kafkaTopicPrefix,
          clientId: 'guestpass-forwarder',
          logger,
        });
        started.push(() => bus.close());
        // One forwarder is active among the projections processes (the others stand by): each would
        // otherwise publish every pass event again. A standby takes over from the checkpoint.
        const forwarding = runPassEventForwarder({ store: runtime.store, knex: runtime.knex, bus, logger });
        started.push(() => forwarding.stop());
        checks.push(kafkaCheck(bus));
      }

      // The audit notary (one active among the processes): Merkle tree, signed heads, sample checks.
      const notary = runAuditNotary({ knex: runtime.knex, store: runtime.store, kek: await keyEncryptionKey(config), logger });
      started.push(() => notary.stop());
      checks.push(notary.integrity.readinessCheck());

      // Pass delivery: the email and SMS of each new batch (SMTP_URL, SMS_*; else the outbox folder).
      const baseUrl = defaultBaseUrl(config, config.port);
      const delivery = await startConfiguredPassDelivery(runtime, config, { baseUrl, logger });
      started.push(() => delivery.stop());
      logger.info({ delivery: delivery.description }, 'pass delivery started');

      const metricsObservers = [observeLogLag({ knex: runtime.knex, store: runtime.store }), observeDeliveryOutcomes(runtime.knex)];
      started.push(async () => metricsObservers.forEach((stop) => stop()));
      return { app: null, checks, close };
    } catch (error) {
      await close().catch((stopError: unknown) => logger.warn({ err: stopError }, 'stopping after a failed start failed'));
      throw error;
    }
  });
}

main().catch((error: unknown) => {
  console.error(`projections: ${describeStartupError(error)}`);
  process.exit(1);
});
