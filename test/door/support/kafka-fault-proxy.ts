// A TCP proxy in front of a private Kafka broker (which advertises the proxy's port, so every
// client connection passes through it) that can cut a connection the moment a client sends a
// given request: a real network fault at a chosen step of the protocol, for the tests of the
// bus's recovery. Kafka requests are framed as int32 size, then int16 api key.
import net from 'node:net';

/** Kafka API keys the tests cut at. */
export const API_KEYS = { FindCoordinator: 10, JoinGroup: 11, Heartbeat: 12, SyncGroup: 14 } as const;

export class KafkaFaultProxy {
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  /** Remaining cuts per api key. */
  private readonly cuts = new Map<number, number>();
  /** Requests seen per api key (counted whether cut or not). */
  readonly seen = new Map<number, number>();

  private constructor(
    readonly port: number,
    private readonly target: () => number,
    server: net.Server,
  ) {
    this.server = server;
  }

  /** Listens on `port` (0: a free one) and forwards to 127.0.0.1:target(). */
  static async start(port: number, target: () => number): Promise<KafkaFaultProxy> {
    let proxy: KafkaFaultProxy | null = null;
    const server = net.createServer((client) => proxy!.pipe(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', resolve);
    });
    proxy = new KafkaFaultProxy((server.address() as net.AddressInfo).port, target, server);
    return proxy;
  }

  /** Cuts the connection that sends the next `times` requests with this api key (before they reach the broker). */
  cutAt(apiKey: number, times = 1): void {
    this.cuts.set(apiKey, (this.cuts.get(apiKey) ?? 0) + times);
  }

  /** Cuts still armed for this api key. */
  pendingCuts(apiKey: number): number {
    return this.cuts.get(apiKey) ?? 0;
  }

  private pipe(client: net.Socket): void {
    const upstream = net.connect({ host: '127.0.0.1', port: this.target() });
    this.sockets.add(client).add(upstream);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    const close = () => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    let pending = Buffer.alloc(0);
    client.on('data', (chunk) => {
      pending = Buffer.concat([pending, chunk]);
      // Forward whole requests only, so a cut happens before the broker sees the request.
      while (pending.length >= 6) {
        const size = pending.readInt32BE(0);
        if (pending.length < 4 + size) break;
        const apiKey = pending.readInt16BE(4);
        this.seen.set(apiKey, (this.seen.get(apiKey) ?? 0) + 1);
        const left = this.cuts.get(apiKey) ?? 0;
        if (left > 0) {
          this.cuts.set(apiKey, left - 1);
          close();
          return;
        }
        upstream.write(pending.subarray(0, 4 + size));
        pending = pending.subarray(4 + size);
      }
    });
    upstream.on('data', (chunk) => client.write(chunk));
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
