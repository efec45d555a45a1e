// The PostgreSQL event store's catch-up subscription (postgres-event-store.ts): reads after its
// position, and waits for the store's append notifications (append-notifications.ts) or a poll.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { EventStore, RecordedEvent, SubscribeOptions, Subscription } from './event-store.js';
import type { AppendNotifications } from './append-notifications.js';

/** Events a subscription reads per batch unless its options say otherwise. */
const DEFAULT_BATCH_SIZE = 500;

/** Lets stop() called from inside the handler return without waiting for that same handler. */
const insideHandler = new AsyncLocalStorage<PollingSubscription>();

/**
 * Catch-up subscription: reads batches after the checkpoint, awaits the handler, and when caught
 * up waits for a notification or the poll interval. A failing fetch is reported and retried; a
 * failing handler is reported and ends the subscription, since the handler's owner holds the
 * checkpoint and decides how to resume.
 */
export class PollingSubscription implements Subscription {
  private stopped = false;
  private wake: (() => void) | null = null;
  private readonly done: Promise<void>;

  constructor(
    private readonly store: EventStore,
    private readonly notifications: AppendNotifications,
    private readonly options: SubscribeOptions,
    private readonly pollIntervalMs: number,
    onDone: () => void,
  ) {
    this.done = this.run().finally(onDone);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    if (insideHandler.getStore() === this) return; // the loop ends when the handler returns
    await this.done;
  }

  private async run(): Promise<void> {
    const batchSize = this.options.batchSize ?? DEFAULT_BATCH_SIZE;
    const unlisten = this.notifications.listen(() => this.wake?.());
    let position = this.options.after;
    let failures = 0;
    try {
      while (!this.stopped) {
        const seen = this.notifications.generation;
        let batch: RecordedEvent[];
        try {
          batch = await this.store.readAll({ after: position, maxCount: batchSize });
          failures = 0;
        } catch (error) {
          this.report(error);
          failures++;
          await this.idle(-1, Math.min(30_000, this.pollIntervalMs * 2 ** failures));
          continue;
        }
        if (this.stopped) break;
        if (batch.length > 0) {
          try {
            await insideHandler.run(this, () => this.options.onEvents(batch));
          } catch (error) {
            this.report(error);
            break;
          }
          position = batch.at(-1)!.position;
          if (batch.length === batchSize) continue; // more are likely waiting
        }
        await this.idle(seen, this.pollIntervalMs);
      }
    } finally {
      this.stopped = true;
      unlisten();
    }
  }

  /** Waits for `ms`, a notification, or stop(); returns at once if a notification came since `seen`. */
  private idle(seen: number, ms: number): Promise<void> {
    if (this.stopped || (seen >= 0 && this.notifications.generation !== seen)) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.wake?.(), ms);
      this.wake = () => {
        clearTimeout(timer);
        this.wake = null;
        resolve();
      };
    });
  }

  private report(error: unknown): void {
    if (this.options.onError) this.options.onError(error);
    else console.error('event store subscription:', error instanceof Error ? error.message : String(error));
  }
}
