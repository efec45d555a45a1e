// The PostgreSQL event store's wake-up for its subscriptions (postgres-event-store.ts): LISTEN on
// the channel its appends NOTIFY, on one connection of its own.
import pg from 'pg';

/**
 * One LISTEN connection per store, shared by its subscriptions and opened only while one runs.
 * `generation` moves on every notification and on every (re)connection, when notifications may
 * have been missed, so a subscription that compares it before and after a fetch never sleeps
 * through an append.
 */
export class AppendNotifications {
  generation = 0;
  private readonly listeners = new Set<() => void>();
  private client: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly config: pg.ClientConfig,
    private readonly channel: string,
  ) {}

  /** Calls `listener` on every change of `generation`; returns the unsubscribe function. */
  listen(listener: () => void): () => void {
    this.listeners.add(listener);
    this.ensureConnected();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) void this.disconnect();
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    await this.disconnect();
  }

  /** Wakes this process's subscriptions (notifications from PostgreSQL come here too). */
  changed(): void {
    this.generation++;
    for (const listener of [...this.listeners]) listener();
  }

  private ensureConnected(): void {
    if (this.closed || this.client || this.connecting || this.retryTimer) return;
    // keepAlive: a connection that died silently would otherwise leave us deaf until polling notices.
    const client = new pg.Client({ ...this.config, keepAlive: true });
    this.connecting = (async () => {
      let failed = false;
      client.on('error', () => undefined); // handled by 'end' below
      client.on('notification', () => this.changed());
      client.once('end', () => {
        if (this.client !== client) return;
        this.client = null;
        this.changed(); // notifications may have been lost: have every subscription look again
        this.scheduleReconnect();
      });
      try {
        await client.connect();
        await client.query(`LISTEN ${quoteIdent(this.channel)}`);
      } catch {
        failed = true;
      }
      this.connecting = null;
      if (failed || this.closed || this.listeners.size === 0) {
        await client.end().catch(() => undefined);
        if (failed) this.scheduleReconnect(); // polling covers the time without notifications
        return;
      }
      this.client = client;
      this.changed();
    })();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.listeners.size === 0 || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.ensureConnected();
    }, 1000);
    this.retryTimer.unref();
  }

  private async disconnect(): Promise<void> {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    if (this.connecting) await this.connecting;
    // A subscription may have started while the connection was being made: keep it for that one.
    if (!this.closed && this.listeners.size > 0) return;
    const client = this.client;
    this.client = null;
    if (client) await client.end().catch(() => undefined);
  }
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
