// HTTPS clients of the gateway that trust its self-signed certificate (undici Agents with it as
// the one CA). `viaTerminator` connects from 127.0.0.2, which the test's gateway trusts as a TLS
// terminator in front of it (GATEWAY_TRUSTED_PROXIES), so that a request can say which client it
// carries in X-Forwarded-For, as a load balancer does.
import { Agent, getGlobalDispatcher, request, setGlobalDispatcher, type Dispatcher } from 'undici';

export const TERMINATOR_ADDRESS = '127.0.0.2';

export interface Answer<T = any> {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: T;
  readonly text: string;
  readonly ms: number;
}

export interface CallOptions {
  readonly apiKey?: string;
  readonly bearer?: string;
  readonly json?: unknown;
  /** Sent as X-Forwarded-For (believed only from a trusted terminator). */
  readonly forwardedFor?: string;
  readonly headers?: Record<string, string>;
  /** Gives up (a failed call, status 0) after this long; default 30 s. */
  readonly timeoutMs?: number;
}

export class GatewayClient {
  constructor(
    readonly baseUrl: string,
    readonly dispatcher: Dispatcher,
  ) {}

  /** Connects from 127.0.0.1: an ordinary client, its own address is its identity. */
  static direct(baseUrl: string, ca: Buffer | null, connections = 16): GatewayClient {
    return new GatewayClient(baseUrl, new Agent({ connections, ...(ca ? { connect: { ca } } : {}) }));
  }

  /** Connects from 127.0.0.2, the address the gateway trusts as a terminator in front of it. */
  static viaTerminator(baseUrl: string, ca: Buffer, connections = 16): GatewayClient {
    return new GatewayClient(baseUrl, new Agent({ connections, localAddress: TERMINATOR_ADDRESS, connect: { ca } }));
  }

  /** Never throws for a failed exchange: a connection error or time-out is status 0 with the error in `text`. */
  async call<T = any>(method: string, path: string, options: CallOptions = {}): Promise<Answer<T>> {
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
    if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
    if (options.bearer) headers.authorization = `Bearer ${options.bearer}`;
    if (options.forwardedFor) headers['x-forwarded-for'] = options.forwardedFor;
    let body: string | undefined;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers['content-type'] = 'application/json';
    }
    const started = performance.now();
    const timeout = options.timeoutMs ?? 30_000;
    try {
      const res = await request(this.baseUrl + path, {
        method: method as Dispatcher.HttpMethod,
        headers,
        body,
        dispatcher: this.dispatcher,
        headersTimeout: timeout,
        bodyTimeout: timeout,
      });
      const text = await res.body.text();
      let parsed: unknown = null;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        parsed = null;
      }
      return { status: res.statusCode, headers: res.headers, body: parsed as T, text, ms: performance.now() - started };
    } catch (error) {
      return { status: 0, headers: {}, body: null as T, text: String((error as Error)?.message ?? error), ms: performance.now() - started };
    }
  }

  close(): Promise<void> {
    return this.dispatcher.close();
  }
}

/**
 * Makes this process's fetch() trust the gateway's certificate (the sign-in pages' cookie-jar
 * browser and openid-client use the global fetch); returns what puts the previous dispatcher back.
 */
export function trustGatewayInFetch(ca: Buffer): () => Promise<void> {
  const previous = getGlobalDispatcher();
  const agent = new Agent({ connect: { ca } });
  setGlobalDispatcher(agent);
  return async () => {
    setGlobalDispatcher(previous);
    await agent.close();
  };
}
