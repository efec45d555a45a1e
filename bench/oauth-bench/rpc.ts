// Request/response over a forked child's IPC channel: the bench's parent drives each of its
// children (our server, the peer, the load generator) with named calls and awaits the answers.
// A child that dies fails every call still waiting, with its exit code in the message.
import type { ChildProcess } from 'node:child_process';

interface CallMessage {
  readonly rpc: number;
  readonly method: string;
  readonly params: unknown;
}

interface ReplyMessage {
  readonly rpc: number;
  readonly result?: unknown;
  readonly error?: string;
}

const READY = 'bench-child-ready';

export type Handlers = Record<string, (params: any) => Promise<unknown>>;

/** Child side: answers the parent's calls with `handlers`, then tells the parent it is listening. */
export function serveRpc(handlers: Handlers): void {
  if (!process.send) throw new Error('this module runs as a forked child of bench/oauth-vs-oidc-provider.ts');
  process.on('message', (message: CallMessage) => {
    if (typeof message?.rpc !== 'number') return;
    const handler = handlers[message.method];
    const answer = handler ? handler(message.params) : Promise.reject(new Error(`unknown method ${message.method}`));
    answer.then(
      (result) => process.send!({ rpc: message.rpc, result } satisfies ReplyMessage),
      (error: unknown) =>
        process.send!({ rpc: message.rpc, error: error instanceof Error ? error.message : String(error) } satisfies ReplyMessage),
    );
  });
  // The parent loses messages sent before the handler above exists: it waits for this one.
  process.send({ ready: READY });
  // The parent going away ends the child (no orphaned servers or load).
  process.on('disconnect', () => process.exit(1));
}

/** Parent side: calls on one child. */
export class RpcClient {
  private next = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void; method: string }>();
  private exited: Error | null = null;
  readonly ready: Promise<void>;

  constructor(
    readonly name: string,
    readonly child: ChildProcess,
  ) {
    this.ready = new Promise<void>((resolve, reject) => {
      child.on('message', (message: ReplyMessage & { ready?: string }) => {
        if (message?.ready === READY) return resolve();
        const call = this.pending.get(message?.rpc);
        if (!call) return;
        this.pending.delete(message.rpc);
        if (message.error !== undefined) call.reject(new Error(`${this.name}.${call.method} failed: ${message.error}`));
        else call.resolve(message.result);
      });
      child.once('exit', (code, signal) => {
        this.exited = new Error(`${this.name} exited (${signal ?? `code ${code}`})`);
        reject(this.exited);
        for (const call of this.pending.values()) call.reject(this.exited);
        this.pending.clear();
      });
      child.once('error', reject);
    });
  }

  call<T>(method: string, params: unknown = {}): Promise<T> {
    if (this.exited) return Promise.reject(this.exited);
    const rpc = this.next++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(rpc, { resolve: resolve as (v: unknown) => void, reject, method });
      this.child.send({ rpc, method, params } satisfies CallMessage);
    });
  }

  get alive(): boolean {
    return this.exited === null;
  }
}
