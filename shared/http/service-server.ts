// The HTTP server of every process (each service run alone, the projections runner, the
// door-gateway, and `npm start`'s gateway). It never accepts a request it cannot answer:
//
// * It listens at once, before the process has opened its connections: /healthz answers 200,
//   /readyz and every other request 503 with Retry-After (and Connection: close) until serve().
// * With an operators' port of its own (OPS_PORT), /healthz, /readyz and /metrics answer there
//   from the first moment, and the API port opens only once the process serves: a gateway's
//   connection to an instance that is starting is refused, and passed on to another instance
//   whatever its method (a 503 to a POST that reached an instance is not).
// * On close() it stops listening (new connections are refused), answers requests that arrive on
//   connections already open (with `Connection: close`; 503 if it never served), lets the
//   requests under way finish (for DRAIN_MS at most), and resolves once every connection has
//   ended; the operators' port closes last. An idle kept-alive connection is left to its client
//   for HTTP_STOP_IDLE_MS: closing it under a gateway that is sending a POST on it in that very
//   moment is a 502 the gateway may not retry (the POST may have arrived). The gateway closes
//   it first (its upstream keepalive_timeout is shorter) or sends one last request on it.
// * Its timeouts fit a service behind a proxy: idle kept-alive connections outlive the gateway's
//   (HTTP_KEEP_ALIVE_TIMEOUT_MS, 65 s > nginx's upstream 4 s), and a client that sends its headers or its
//   request too slowly is cut off (HTTP_HEADERS_TIMEOUT_MS, HTTP_REQUEST_TIMEOUT_MS).
import http from 'node:http';
import net from 'node:net';
import type { HttpTimeouts } from '../config.js';
import type { Logger } from '../logger.js';
import { opsRoutes, RETRY_AFTER_SECONDS, type Lifecycle } from './ops-routes.js';
import { Readiness, type ReadinessCheck } from './readiness.js';
import { observeReadiness } from '../metrics/readiness-metrics.js';

export interface ServiceServerOptions {
  readonly host: string;
  /** 0 picks a free port (see ServiceServer.port). */
  readonly port: number;
  /** OPS_PORT: the operators' endpoints on a port of their own, and the API port opened only once serving; null = one port for both, open at once. */
  readonly opsPort?: number | null;
  readonly timeouts: HttpTimeouts;
  readonly metricsToken: string | null;
  readonly logger: Logger;
  /** For log lines: `command service`, `projections`, ... */
  readonly name: string;
}

export interface ServiceServer {
  readonly server: http.Server;
  /** The port the API listens on (or will, with an operators' port: the one asked for). */
  readonly port: number;
  /** The operators' port, when it has one of its own. */
  readonly opsPort: number | null;
  lifecycle(): Lifecycle;
  /**
   * From now on requests reach `app` (null: a process with no API of its own; anything but the
   * operators' endpoints is a 404) and /readyz checks `checks`. With an operators' port, opens
   * the API port (resolves once it listens; a process without an app opens none).
   */
  serve(app: http.RequestListener | null, checks: readonly ReadinessCheck[]): Promise<void>;
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
      if (lifecycle === 'starting' || (lifecycle === 'stopping' && !app)) return unavailable(req, res, lifecycle);
      if (!app) return notFound(req, res);
      // Stopping: a request on a connection already open is still served (the app's connections
      // stay open until the server has drained), and the connection closes after it. A 503 here
      // would reach the client of a POST: the gateway does not send a POST that reached an
      // instance to another one.
      if (lifecycle === 'stopping') res.setHeader('Connection', 'close');
      underWay.add(res);
      res.once('close', () => underWay.delete(res));
      app(req, res);
    },
  );
  // Behind a proxy the idle gateway connection is closed by the gateway first; nothing else here.
  server.keepAliveTimeout = timeouts.keepAliveTimeoutMs;

  const listen = (target: http.Server, port: number) =>
    new Promise<number>((resolve, reject) => {
      target.once('error', reject);
      target.listen(port, options.host, () => {
        target.off('error', reject);
        const address = target.address();
        resolve(typeof address === 'object' && address ? address.port : port);
      });
    });
  const opsServer =
    options.opsPort === null || options.opsPort === undefined
      ? null
      : http.createServer({ keepAliveTimeout: timeouts.keepAliveTimeoutMs, headersTimeout: timeouts.headersTimeoutMs, requestTimeout: timeouts.requestTimeoutMs }, (req, res) => {
          if (!ops(req, res)) notFound(req, res);
        });
  let port = options.port;
  let opsPort: number | null = null;
  if (opsServer) {
    opsPort = await listen(opsServer, options.opsPort!);
    logger.info({ host: options.host, port: opsPort }, `${options.name}: operators' port open; the API port opens once started`);
  } else {
    port = await listen(server, options.port);
    logger.info({ host: options.host, port }, `${options.name}: port open, answering 503 until started`);
  }

  let closing: Promise<void> | null = null;
  return {
    server,
    get port() {
      return port;
    },
    opsPort,
    lifecycle: () => lifecycle,
    async serve(listener, checks) {
      if (lifecycle !== 'starting') return;
      app = listener;
      readiness.use(checks);
      if (opsServer && listener) port = await listen(server, options.port);
      if (lifecycle === 'starting') lifecycle = 'serving';
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        lifecycle = 'stopping';
        // An answer already under way whose headers are out keeps its connection open: the client
        // may send on it once more from its end, so the idle grace counts from that answer's end.
        let idleGraceFrom = Date.now();
        for (const res of underWay) {
          if (!res.headersSent) res.setHeader('Connection', 'close');
          else res.once('finish', () => (idleGraceFrom = Math.max(idleGraceFrom, Date.now())));
        }
        stopObserving();
        const closeOps = () => {
          if (!opsServer) return resolve();
          opsServer.close(() => resolve());
          opsServer.closeAllConnections();
        };
        if (!server.listening) {
          closeOps();
          return;
        }
        // Stops listening at once: from now on connections are refused (a gateway passes that on
        // to another instance, whatever the method). net.Server's close, not http.Server's: that
        // one also closes the idle kept-alive connections at once, under a client that may be
        // sending on them. A connection accepted but not yet read is answered (503 or the app's
        // answer, with Connection: close); only one the kernel queued in the very moment of
        // closing, not yet accepted, is reset.
        net.Server.prototype.close.call(server, () => {
          clearInterval(sweep);
          clearTimeout(drain);
          closeOps();
        });
        // A process with no API of its own has no gateway in front: its idle connections (probes,
        // Prometheus) close at once.
        const idleMs = app ? timeouts.stopIdleMs : 0;
        // Idle connections once the grace is over (http.Server's close: it also stops the
        // timeout checks), and, once DRAIN_MS is over, all.
        const sweep = setInterval(() => {
          if (Date.now() - idleGraceFrom >= idleMs) server.close();
        }, Math.min(100, Math.max(10, idleMs)));
        const drain = setTimeout(() => {
          if (underWay.size > 0) logger.warn({ requests: underWay.size }, `${options.name}: requests still under way after ${DRAIN_MS} ms; dropping them`);
          server.closeAllConnections();
        }, DRAIN_MS);
      });
      return closing;
    },
  };
}
