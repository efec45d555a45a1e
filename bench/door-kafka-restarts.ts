// Kafka restarts in a row under revocations (issue 27): `npx tsx bench/door-kafka-restarts.ts
//   [--runs 50] [--down-ms 2000] [--revoked 3] [--deadline-ms 30000]`, or `--smoke` (one run).
// A private Kafka broker (the jars of .ci/kafka/start.sh, java) and a private Mosquitto (the
// mosquitto binary): the shared brokers are never touched. Each run stops the broker (graceful
// stops and SIGKILLs in turn), revokes passes while it is down, starts it and measures the time
// from the broker answering to both simulated controllers denying every revoked pass. A run past
// the deadline is a failure; the bench exits 1 when any run failed.
import { stopTestDatabases } from '../test/support/database.js';
import { mosquittoBinary } from '../test/door/support/broker-processes.js';
import { javaBinary, kafkaLibDir } from '../test/support/private-kafka.js';
import { KafkaRestartRounds, type RoundResult } from '../test/door/support/kafka-restart-rounds.js';
import { integerOption } from './command-line-options.js';
import { percentile } from './percentile.js';
import { runThenExit } from './run-then-exit.js';

const RUNS = process.argv.includes('--smoke') ? 1 : integerOption('runs', 50);
const DOWN_MS = integerOption('down-ms', 2000);
const REVOKED = integerOption('revoked', 3);
const DEADLINE_MS = integerOption('deadline-ms', 30_000);

async function main(): Promise<void> {
  const mosquitto = mosquittoBinary();
  if (!javaBinary() || !kafkaLibDir() || !mosquitto) {
    console.error('needs java, the Kafka jars (.ci/kafka/start.sh fetches them into .ci/kafka/lib) and the mosquitto binary');
    process.exitCode = 1;
    return;
  }
  console.log(`starting a private Kafka broker and Mosquitto; ${RUNS} run(s), broker down ${DOWN_MS} ms, ${REVOKED} revocation(s) per run, deadline ${DEADLINE_MS} ms`);
  const rounds = await KafkaRestartRounds.start({ revokedPerRound: REVOKED, downMs: DOWN_MS, deadlineMs: DEADLINE_MS }, mosquitto);
  const results: RoundResult[] = [];
  try {
    for (let i = 0; i < RUNS; i++) {
      let r: RoundResult;
      try {
        r = await rounds.next();
      } catch (error) {
        // The broker did not come back (a loaded machine can take minutes): the runs so far still count.
        console.log(`run ${String(i + 1).padStart(3)}  did not complete: ${(error as Error).message}`);
        results.push({ round: i + 1, how: i % 2 === 0 ? 'stop' : 'kill', restartMs: NaN, deniedMs: null, failure: (error as Error).message });
        break;
      }
      results.push(r);
      console.log(
        `run ${String(r.round).padStart(3)}  ${r.how.padEnd(4)}  broker back after ${(r.restartMs / 1000).toFixed(1).padStart(5)} s  ` +
          (r.failure ? `FAILED: ${r.failure}` : `every revoked pass denied at every controller ${(r.deniedMs! / 1000).toFixed(2)} s after it answered`),
      );
    }
  } finally {
    await rounds.stop();
    await stopTestDatabases();
  }
  const times = results.flatMap((r) => (r.deniedMs === null ? [] : [r.deniedMs])).sort((a, b) => a - b);
  const failures = results.filter((r) => r.failure).length;
  const s = (ms: number | undefined) => (ms === undefined || Number.isNaN(ms) ? '-' : `${(ms / 1000).toFixed(2)} s`);
  console.log(
    `runs ${results.length}, failures ${failures}; broker answering -> every revoked pass denied: ` +
      `p50 ${s(percentile(times, 50))}, p99 ${s(percentile(times, 99))}, max ${s(times.at(-1))}`,
  );
  if (failures > 0) process.exitCode = 1;
}

runThenExit(main);
