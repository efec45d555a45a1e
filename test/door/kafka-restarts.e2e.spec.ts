// The door path comes back after every Kafka restart (issue 27): ten restarts in a row of a
// private broker (graceful stops and SIGKILLs in turn), passes revoked while it is down, and
// every revocation denied at every controller within 30 s of the broker answering, every time.
// The same rounds, 50 in a row with figures: bench/door-kafka-restarts.ts.
import { expect } from 'chai';
import { requireComponent } from '../support/components.js';
import { mosquittoBinary } from './support/broker-processes.js';
import { javaBinary, kafkaLibDir } from '../support/private-kafka.js';
import { KafkaRestartRounds, type RoundResult } from './support/kafka-restart-rounds.js';

describe('door path: ten Kafka restarts in a row under revocations', function () {
  this.timeout(30 * 60_000);
  let rounds: KafkaRestartRounds | null = null;

  before(async function () {
    requireComponent(this, 'a private Kafka broker', Boolean(javaBinary() && kafkaLibDir()), 'java and .ci/kafka/lib; .ci/kafka/start.sh fetches the jars');
    const mosquitto = mosquittoBinary();
    requireComponent(this, 'a private Mosquitto', Boolean(mosquitto), 'the mosquitto binary; .ci/mosquitto.sh installs it');
    rounds = await KafkaRestartRounds.start({ revokedPerRound: 3, downMs: 1000, deadlineMs: 30_000 }, mosquitto!);
  });

  after(async () => {
    await rounds?.stop();
  });

  it('every revocation reaches every controller within 30 s of the broker answering, ten times', async () => {
    const results: RoundResult[] = [];
    for (let i = 0; i < 10; i++) {
      const result = await rounds!.next();
      results.push(result);
      // Stop at the first failure: the next round would start from a door path already behind.
      expect(result.failure, JSON.stringify(results)).to.equal(null);
    }
    expect(results.every((r) => r.deniedMs !== null && r.deniedMs <= 30_000)).to.equal(true);
  });
});
