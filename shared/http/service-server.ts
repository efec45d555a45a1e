// The HTTP server of every process (each service run alone, the projections runner, the
// door-gateway, and `npm start`'s gateway). It never accepts a request it cannot answer:
//
// * It listens at once, before the process has opened its connections: /healthz answers 200,
//   /readyz and every other request 503 with Retry-After (and Connection: close) until serve().
// * On close() it stops listening (new connections are refused), answers 503 to requests that
//   arrive on connections already open, lets the requests under way finish (for DRAIN_MS at most),
//   and resolves once every connection has ended.
// * Its timeouts fit a service behind a proxy: idle kept-alive connections outlive the gateway's
//   (HTTP_KEEP_ALIVE_TIMEOUT_MS, 65 s > nginx's 60 s), and a client that sends its headers or its
//   request too slowly is cut off (HTTP_HEADERS_TIMEOUT_MS, HTTP_REQUEST_TIMEOUT_MS).
import http from 'node:http';
import type { HttpTimeouts } from '../config.js';
import type { Logger } from '../logger.js';
import { opsRoutes, RETRY_AFTER_SECONDS, type Lifecycle } from './ops-routes.js';
import { Readiness, type ReadinessCheck } from './readiness.js';
import { observeReadiness } from '../metrics/readiness-metrics.js';

export interface ServiceServerOptions {
  readonly host: string;
  /** 0 picks a free port (see ServiceServer.port). */
  readonly port: number;
  readonly timeouts: HttpTimeouts;
  readonly metricsToken: string | null;
  readonly logger: Logger;
  /** For log lines: `command service`, `projections`, ... */
  readonly name: string;
}

export interface ServiceServer {
  readonly server: http.Server;
  /** The port it listens on. */
  readonly port: number;
  lifecycle(): Lifecycle;
  /**
   * From now on requests reach `app` (null: a process with no API of its own; anything but the
   * operators' endpoints is a 404) and /readyz checks `checks`.
   */
  serve(app: http.RequestListener | null, checks: readonly ReadinessCheck[]): void;
  /** Stops as described above; safe to call more than once and before serve(). */
  close(): Promise<void>;
}

/** How long close() lets requests under way finish before it drops their connections. */
export const DRAIN_MS = 30_000;

function unavailable(req: http.IncomingMessage, res: http.ServerResponse, lifecycle: Lifecycle): void {
  const body = JSON.stringify({ success: false, error: `the service is ${lifecycle}`, code: 'unavailable' });
  res.writeHead(503, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    'Retry-After': String(RETRY_AFTER_SECONDS),
    'Cache-Control': 'no-store',
    Connection: 'close',
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}

function notFound(req: http.IncomingMessage, res: http.ServerResponse): void {
  const body = JSON.stringify({ success: false, error: 'no such endpoint', code: 'not_found' });
  res.writeHead(404, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store' });
  res.end(req.method === 'HEAD' ? undefined : body);
}

export async function openServiceServer(options: ServiceServerOptions): Promise<ServiceServer> {
  const { timeouts, logger } = options;
  let lifecycle: Lifecycle = 'starting';
  let app: http.RequestListener | null = null;
  const readiness = new Readiness(logger);
  const ops = opsRoutes({ readiness, lifecycle: () => lifecycle, metricsToken: options.metricsToken });
  const stopObserving = observeReadiness(readiness, () => lifecycle);
  /** Answers of the app still being written: told to close their connection when stopping begins. */
  const underWay = new Set<http.ServerResponse>();

  const server = http.createServer(
    {
      keepAliveTimeout: timeouts.keepAliveTimeoutMs,
      headersTimeout: timeouts.headersTimeoutMs,
      requestTimeout: timeouts.requestTimeoutMs,
      // How often the two timeouts above are enforced (Node's default, 30 s, would let a slow
      // client hold its connection up to 30 s past them).
      connectionsCheckingInterval: Math.min(30_000, Math.max(100, Math.floor(timeouts.headersTimeoutMs / 4))),
    },
    (req, res) => {
      if (ops(req, res)) return;
      if (lifecycle !== 'serving') return unavailable(req, res, lifecycle);
      if (!app) return notFound(req, res);
      underWay.add(res);
      res.once('close', () => underWay.delete(res));
      app(req, res);
    },
  );
  // Behind a proxy the idle gateway connection is closed by the gateway first; nothing else here.
  server.keepAliveTimeout = timeouts.keepAliveTimeoutMs;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  logger.info({ host: options.host, port }, `${options.name}: port open, answering 503 until started`);

  let closing: Promise<void> | null = null;
  return {
    server,
    port,
    lifecycle: () => lifecycle,
    serve(listener, checks) {
      if (lifecycle !== 'starting') return;
      app = listener;
      readiness.use(checks);
      lifecycle = 'serving';
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        lifecycle = 'stopping';
        for (const res of underWay) if (!res.headersSent) res.setHeader('Connection', 'close');
        // Stops listening at once (from now on connections are refused) and closes the idle
        // kept-alive connections; a connection accepted but not yet read is not idle, so its
        // request is still answered (503). Only a connection the kernel queued in the very moment
        // of closing, not yet accepted, is reset: the stop's first step is this one.
        stopObserving();
        server.close(() => {
          clearInterval(sweep);
          clearTimeout(drain);
          resolve();
        });
        // Connections that fall idle after their last answer, and, once DRAIN_MS is over, all.
        const sweep = setInterval(() => server.closeIdleConnections(), 100);
        const drain = setTimeout(() => {
          if (underWay.size > 0) logger.warn({ requests: underWay.size }, `${options.name}: requests still under way after ${DRAIN_MS} ms; dropping them`);
          server.closeAllConnections();
        }, DRAIN_MS);
      });
      return closing;
    },
  };
}
