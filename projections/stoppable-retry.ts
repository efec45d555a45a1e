// Retrying a reactor's I/O in place (a broker or database that is down for a while) with
// exponential back-off, until it succeeds or the reactor stops: a subscription ends on a handler
// error, so a reactor retries rather than throws, and stop() must not wait for a dead broker.
import type { Logger } from '../shared/logger.js';

export class Stopped extends Error {
  override readonly name = 'Stopped';
}

export interface RetryOptions {
  readonly initialMs?: number;
  readonly maxMs?: number;
}

export class StoppableRetry {
  private stopping = false;
  private wakeStop: (() => void) | null = null;
  /** Rejects with Stopped once stop() is called: raced against work and pauses. */
  readonly stopSignal: Promise<never>;

  constructor(
    /** Names the reactor in log lines and in the Stopped error. */
    private readonly label: string,
    private readonly logger: Logger | undefined,
    private readonly options: RetryOptions = {},
  ) {
    this.stopSignal = new Promise<never>((_, reject) => {
      this.wakeStop = () => reject(new Stopped(`${label} stopping`));
    });
    this.stopSignal.catch(() => undefined);
  }

  get stopped(): boolean {
    return this.stopping;
  }

  stop(): void {
    this.stopping = true;
    this.wakeStop?.();
  }

  /** Runs `work` until it succeeds, backing off; throws Stopped as soon as stop() is called. */
  async run<T>(what: string, work: () => Promise<T>): Promise<T> {
    const initial = this.options.initialMs ?? 100;
    const max = this.options.maxMs ?? 5000;
    for (let attempt = 0; ; attempt++) {
      if (this.stopping) throw new Stopped(`${this.label} stopping`);
      try {
        // Racing the stop signal lets stop() return while the work still waits for a broker.
        return await Promise.race([work(), this.stopSignal]);
      } catch (error) {
        if (error instanceof Stopped || this.stopping) throw new Stopped(`${this.label} stopping`);
        const delay = Math.min(max, initial * 2 ** attempt);
        this.logger?.warn({ err: error, reactor: this.label, attempt: attempt + 1, retryInMs: delay }, `${this.label}: ${what} failed`);
        await this.pause(delay);
      }
    }
  }

  /** Waits `ms`, or throws Stopped as soon as stop() is called. */
  pause(ms: number): Promise<void> {
    return Promise.race([new Promise<void>((resolve) => setTimeout(resolve, ms).unref()), this.stopSignal]);
  }
}
