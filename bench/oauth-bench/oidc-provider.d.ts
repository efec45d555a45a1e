// oidc-provider ships no type declarations: the little of it the bench's peer uses.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface BenchModel {
    save(): Promise<string>;
  }

  export interface Grant extends BenchModel {
    addOIDCScope(scope: string): void;
    addResourceScope(resource: string, scope: string): void;
  }

  export interface Client {
    readonly clientId: string;
  }

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    readonly issuer: string;
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    readonly Grant: new (fields: { accountId: string; clientId: string }) => Grant;
    readonly AuthorizationCode: new (fields: Record<string, unknown>) => BenchModel;
    readonly Client: { find(clientId: string): Promise<Client | undefined> };
  }
}

declare module 'oidc-provider/lib/adapters/memory_adapter.js' {
  /** The default adapter's class: one instance per model over a key-value store. */
  export default class MemoryAdapter {
    constructor(model: string, store: unknown, clockTolerance?: number);
  }
}

declare module 'oidc-provider/lib/helpers/lru.js' {
  /** The store the default adapter keeps everything in (capacity 1,000 entries by default). */
  export default class LRU {
    constructor(options: { maxSize: number });
  }
}
