// What /readyz asks: can this process use its connections now? Each process lists the parts it
// uses (database, event store, Kafka, MQTT); each check runs with a time limit, concurrent probes
// share one run, and a result is reused for a second so a flood of probes is one query.
import type { Knex } from 'knex';
import type { Logger } from '../logger.js';

export interface ReadinessCheck {
  /** The part's name in /readyz answers: `database`, `event_store`, `kafka`, `mqtt`. */
  readonly name: string;
  /** Resolves when the part is usable; rejects (or outlasts the time limit) when it is not. */
  check(): Promise<void>;
}

export interface ReadinessReport {
  readonly ready: boolean;
  /** Every part, `ok` or `failing`; never an error text (it may name hosts or users). */
  readonly checks: Readonly<Record<string, 'ok' | 'failing'>>;
  readonly failing: readonly string[];
}

const CHECK_TIMEOUT_MS = 2000;
const REUSE_MS = 1000;

function within<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

export class Readiness {
  private checks: ReadinessCheck[] = [];
  private running: Promise<ReadinessReport> | null = null;
  private last: { at: number; report: ReadinessReport } | null = null;
  /** Per part: the check still under way from an earlier probe (a hung broker is asked once). */
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly failingBefore = new Set<string>();

  constructor(private readonly logger?: Logger) {}

  /** The parts this process checks from now on. */
  use(checks: readonly ReadinessCheck[]): void {
    this.checks = [...checks];
    this.last = null;
  }

  report(): Promise<ReadinessReport> {
    if (this.last && Date.now() - this.last.at < REUSE_MS) return Promise.resolve(this.last.report);
    this.running ??= this.run().finally(() => (this.running = null));
    return this.running;
  }

  private async run(): Promise<ReadinessReport> {
    const results = await Promise.all(
      this.checks.map(async ({ name, check }) => {
        let pending = this.inFlight.get(name);
        if (!pending) {
          pending = Promise.resolve().then(check);
          this.inFlight.set(name, pending);
          void pending.then(
            () => this.inFlight.delete(name),
            () => this.inFlight.delete(name),
          );
        }
        try {
          await within(pending, CHECK_TIMEOUT_MS, name);
          if (this.failingBefore.delete(name)) this.logger?.info({ part: name }, 'readiness: usable again');
          return [name, 'ok'] as const;
        } catch (error) {
          if (!this.failingBefore.has(name)) this.logger?.warn({ part: name, err: error }, 'readiness: part not usable');
          this.failingBefore.add(name);
          return [name, 'failing'] as const;
        }
      }),
    );
    const failing = results.filter(([, state]) => state === 'failing').map(([name]) => name);
    const report = { ready: failing.length === 0, checks: Object.fromEntries(results), failing };
    this.last = { at: Date.now(), report };
    return report;
  }
}

/**
 * Waits (at most `timeoutMs`) until every check passes at once, so that a process serves its API
 * only when /readyz would say 200: a balancer that reads readiness never sees a ready API answer
 * 503 there. Returns the parts still failing when the time is up (the process serves anyway, and
 * readiness tells the truth about them).
 */
export async function waitUntilReady(checks: readonly ReadinessCheck[], timeoutMs: number, signal?: AbortSignal): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const results = await Promise.all(
      checks.map(({ name, check }) =>
        within(Promise.resolve().then(check), CHECK_TIMEOUT_MS, name).then(
          () => null,
          () => name,
        ),
      ),
    );
    const failing = results.filter((name): name is string => name !== null);
    if (failing.length === 0 || Date.now() >= deadline || signal?.aborted) return failing;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The read models' (and the PostgreSQL event store's) database answers a query. */
export function databaseCheck(knex: Knex, name = 'database'): ReadinessCheck {
  return { name, check: async () => void (await knex.raw('select 1')) };
}

/** The event log answers: its head position is read (either adapter). */
export function eventStoreCheck(store: { headPosition(): Promise<unknown> }): ReadinessCheck {
  return { name: 'event_store', check: async () => void (await store.headPosition()) };
}

/** A Kafka broker answers (KafkaPassBus.checkConnection). */
export function kafkaCheck(bus: { checkConnection(): Promise<void> }): ReadinessCheck {
  return { name: 'kafka', check: () => bus.checkConnection() };
}
