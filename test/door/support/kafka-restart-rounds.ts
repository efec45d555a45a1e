// Kafka restarts under revocations, one round at a time, on a private broker and a private
// Mosquitto (issue 27): the door path (forwarder -> Kafka -> door-gateway -> MQTT -> two simulated
// controllers) must deny every revoked pass at every controller soon after the broker answers
// again, every time. Used by test/door/kafka-restarts.e2e.spec.ts (10 rounds) and
// bench/door-kafka-restarts.ts (50 by default).
import type { ControllerSimulator } from '../../../door-gateway/controller-simulator.js';
import { DoorHarness, uniqueFacilityId } from './door-harness.js';
import { MosquittoInstance } from './broker-processes.js';
import { PrivateKafka } from '../../support/private-kafka.js';
import { testPass, type TestPass } from '../fixtures.js';

export interface RestartRoundsOptions {
  /** Passes revoked while the broker is down, per round. */
  readonly revokedPerRound: number;
  /** How long the broker stays down. */
  readonly downMs: number;
  /** A round fails when a revocation is still granted this long after the broker answers. */
  readonly deadlineMs: number;
  readonly controllers?: number;
}

export interface RoundResult {
  readonly round: number;
  /** `stop` (SIGTERM, controlled shutdown) or `kill` (SIGKILL). */
  readonly how: 'stop' | 'kill';
  /** From the stop to the broker answering again. */
  readonly restartMs: number;
  /** From the broker answering to every controller denying every pass revoked this round; null when past the deadline. */
  readonly deniedMs: number | null;
  /** Why the round failed, when it did. */
  readonly failure: string | null;
}

export class KafkaRestartRounds {
  private round = 0;
  private readonly kept: TestPass[] = [];

  private constructor(
    private readonly options: RestartRoundsOptions,
    private readonly kafka: PrivateKafka,
    private readonly mosquitto: MosquittoInstance,
    private readonly door: DoorHarness,
    private readonly facility: number,
    private readonly controllers: readonly ControllerSimulator[],
  ) {}

  static async start(options: RestartRoundsOptions, mosquittoBinary: string): Promise<KafkaRestartRounds> {
    const kafka = await PrivateKafka.start();
    let mosquitto: MosquittoInstance | null = null;
    try {
      mosquitto = await MosquittoInstance.start(mosquittoBinary);
      const door = await DoorHarness.start({ kind: 'real', label: 'door_kafka_restarts', kafkaBrokers: [kafka.broker], mqttUrl: mosquitto.url, reactor: false });
      const facility = uniqueFacilityId();
      const controllers: ControllerSimulator[] = [];
      for (let i = 0; i < (options.controllers ?? 2); i++) controllers.push(await door.controller(facility));
      const rounds = new KafkaRestartRounds(options, kafka, mosquitto, door, facility, controllers);
      // Passes that stay valid throughout: the doors must keep granting them.
      for (let i = 0; i < 3; i++) rounds.kept.push(await rounds.create());
      await rounds.until(() => rounds.kept.every((p) => rounds.held(p)), 60_000, 'the first passes reach the controllers');
      return rounds;
    } catch (error) {
      await mosquitto?.stop();
      await kafka.destroy();
      throw error;
    }
  }

  /** One round: passes created while the broker is up, revoked while it is down; times their denial after it is back. */
  async next(): Promise<RoundResult> {
    const round = ++this.round;
    const how = round % 2 === 1 ? 'stop' : 'kill';
    const victims: TestPass[] = [];
    for (let i = 0; i < this.options.revokedPerRound; i++) victims.push(await this.create());
    await this.until(() => victims.every((p) => this.held(p)), 60_000, `round ${round}: its passes reach the controllers before the restart`);

    const stoppedAt = Date.now();
    await (how === 'stop' ? this.kafka.stop() : this.kafka.kill());
    for (const p of victims) await this.door.revokePass(p); // into the event log; the forwarder waits for Kafka
    await new Promise((resolve) => setTimeout(resolve, this.options.downMs));
    await this.kafka.launch();
    const answeredAt = Date.now();

    const deadline = answeredAt + this.options.deadlineMs;
    let failure: string | null = null;
    // Polled on what each controller holds (a scan would report an access event each time);
    // the decision itself is checked by one scan per pass and controller at the end.
    for (;;) {
      const held = this.controllers.map((c) => new Set(c.heldIds()));
      const granted = victims.filter((p) => held.some((ids) => ids.has(p.publicId)));
      if (granted.length === 0) break;
      if (Date.now() > deadline) {
        failure = `round ${round}: ${granted.length} of ${victims.length} revoked pass(es) still held by a controller ${this.options.deadlineMs} ms after the broker answered`;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const deniedMs = Date.now() - answeredAt;
    if (!failure) {
      const wrong = victims.flatMap((p) => this.controllers.map((c) => c.scan({ qrValue: p.qrValue }))).filter((o) => o.result !== 'denied' || o.reason !== 'revoked');
      if (wrong.length > 0) failure = `round ${round}: ${wrong.length} scan(s) of revoked passes not denied as revoked`;
    }
    const refused = this.kept.filter((p) => !this.grantedEverywhere(p));
    if (!failure && refused.length > 0) failure = `round ${round}: ${refused.length} pass(es) never revoked were refused at a controller`;
    return { round, how, restartMs: answeredAt - stoppedAt, deniedMs: failure ? null : deniedMs, failure };
  }

  async stop(): Promise<void> {
    await this.door.stop().catch(() => undefined);
    await this.mosquitto.stop();
    await this.kafka.destroy();
  }

  private async create(): Promise<TestPass> {
    const pass = testPass(this.facility);
    await this.door.createPass(pass);
    return pass;
  }

  /** Every controller holds the pass's credential. */
  private held(p: TestPass): boolean {
    return this.controllers.every((c) => c.heldIds().includes(p.publicId));
  }

  private grantedEverywhere(p: TestPass): boolean {
    return this.controllers.every((c) => c.heldIds().includes(p.publicId) && c.scan({ qrValue: p.qrValue }).result === 'granted');
  }

  private async until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
