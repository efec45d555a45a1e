// Runs the projection runner alone: `node dist/projections/main.js`, configured by the
// environment (shared/config.ts: DATABASE_URL, EVENTSTORE_URL, LOG_LEVEL, ...). Several of these
// processes may run at once: checkpoints are locked per batch, so they never apply an event twice.
import { loadConfig } from '../shared/config.js';
import { createLogger } from '../shared/logger.js';
import { openRuntime } from '../cli/runtime.js';
import { onShutdownSignal } from '../shared/shutdown-signal.js';
import { ProjectionRunner } from './runner.js';
import { PassEventForwarder } from './pass-event-forwarder.js';
import { KafkaPassBus } from '../shared/pass-bus/kafka-pass-bus.js';
import { startConfiguredPassDelivery } from './pass-delivery.js';
import { defaultBaseUrl } from '../cli/runtime.js';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, 'projections');
  // DATABASE_URL, else the embedded server a running `npm start` recorded, else an embedded one;
  // migrates, and builds the event store (createEventStore) and the subject key store.
  const runtime = await openRuntime(config, logger);
  const runner = new ProjectionRunner({
    knex: runtime.knex,
    store: runtime.store,
    subjectKeys: runtime.deps.subjectKeys,
    contactHasher: runtime.contactHasher, // the members' email and phone search hashes
    logger,
  });
  await runner.start();
  logger.info({ projections: runner.status().map((p) => p.name) }, 'projection runner started');
  // With Kafka configured, this process also forwards pass events to it for the door-gateway.
  // (Without it, the embedded runner forwards into its in-process bus itself.)
  let forwarder: PassEventForwarder | null = null;
  let bus: KafkaPassBus | null = null;
  if (config.kafkaBrokers.length > 0) {
    bus = new KafkaPassBus({
      brokers: config.kafkaBrokers,
      passTopicPartitions: config.kafkaPassTopicPartitions,
      clientId: 'guestpass-forwarder',
      logger,
    });
    forwarder = new PassEventForwarder({ store: runtime.store, knex: runtime.knex, bus, logger });
    await forwarder.start();
  }

  // Pass delivery: the email and SMS of each new batch (SMTP_URL, SMS_*; else the outbox folder).
  const baseUrl = defaultBaseUrl(config, config.port);
  const delivery = await startConfiguredPassDelivery(runtime, config, { baseUrl, logger });
  logger.info({ delivery: delivery.description }, 'pass delivery started');

  // A second signal while draining exits at once; the batch in flight then rolls back.
  onShutdownSignal((signal) => void stop(signal));
  async function stop(signal: string): Promise<void> {
    logger.info({ signal }, 'stopping: finishing the batch in flight');
    try {
      await delivery.stop();
      await forwarder?.stop();
      await bus?.close();
      await runner.stop();
      await runtime.close();
      process.exit(0);
    } catch (error) {
      logger.error({ err: error }, 'error while stopping');
      process.exit(1);
    }
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
