// The operators' endpoints on every process's own port, answered before (and without) the app:
//   GET /healthz  200 {"status":"ok"} while the process runs
//   GET /readyz   200 {"status":"ready","checks":{...}}, or 503 naming the failing part; 503 while
//                 the process starts or stops
//   GET /metrics  Prometheus exposition; with METRICS_TOKEN set, only for `Authorization: Bearer {token}`
// No credential is needed for the first two and no body names a host, a user or an error text.
// Every answer is `Cache-Control: no-store`.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { renderMetrics } from '../metrics/registry.js';
import type { Readiness } from './readiness.js';

export const OPS_PATHS = { health: '/healthz', ready: '/readyz', metrics: '/metrics' } as const;

/** Where the process is in its life: only `serving` runs the readiness checks. */
export type Lifecycle = 'starting' | 'serving' | 'stopping';

export interface OpsRoutesOptions {
  readonly readiness: Readiness;
  readonly lifecycle: () => Lifecycle;
  /** METRICS_TOKEN; null = /metrics answers anyone who reaches the port. */
  readonly metricsToken: string | null;
}

/** Seconds a client waits before asking again, on every 503 of a starting or stopping process. */
export const RETRY_AFTER_SECONDS = 1;

function send(req: IncomingMessage, res: ServerResponse, status: number, contentType: string, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, {
    'Content-Type': contentType,
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    ...headers,
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}

function sendJson(req: IncomingMessage, res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  send(req, res, status, 'application/json; charset=utf-8', JSON.stringify(body), headers);
}

/** Constant time, whatever the lengths: both sides are hashed first. */
function sameToken(presented: string, expected: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(presented), digest(expected));
}

function bearerToken(req: IncomingMessage): string | null {
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(req.headers.authorization ?? '');
  return match ? match[1]! : null;
}

/**
 * Answers the three endpoints (GET and HEAD) and returns true; returns false for every other
 * request, which the caller hands on.
 */
export function opsRoutes(options: OpsRoutesOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path === OPS_PATHS.health) {
      sendJson(req, res, 200, { status: 'ok' });
      return true;
    }
    if (path === OPS_PATHS.ready) {
      void answerReadiness(req, res, options);
      return true;
    }
    if (path === OPS_PATHS.metrics) {
      void answerMetrics(req, res, options);
      return true;
    }
    return false;
  };
}

async function answerReadiness(req: IncomingMessage, res: ServerResponse, options: OpsRoutesOptions): Promise<void> {
  const lifecycle = options.lifecycle();
  if (lifecycle !== 'serving') {
    sendJson(req, res, 503, { status: lifecycle }, { 'Retry-After': String(RETRY_AFTER_SECONDS) });
    return;
  }
  try {
    const report = await options.readiness.report();
    // Stopping began while the checks ran: the answer is the stop.
    if (options.lifecycle() !== 'serving') return sendJson(req, res, 503, { status: options.lifecycle() }, { 'Retry-After': String(RETRY_AFTER_SECONDS) });
    if (report.ready) sendJson(req, res, 200, { status: 'ready', checks: report.checks });
    else sendJson(req, res, 503, { status: 'unavailable', failing: report.failing, checks: report.checks }, { 'Retry-After': String(RETRY_AFTER_SECONDS) });
  } catch {
    sendJson(req, res, 503, { status: 'unavailable' }, { 'Retry-After': String(RETRY_AFTER_SECONDS) });
  }
}

async function answerMetrics(req: IncomingMessage, res: ServerResponse, options: OpsRoutesOptions): Promise<void> {
  if (options.metricsToken !== null) {
    const presented = bearerToken(req);
    if (presented === null || !sameToken(presented, options.metricsToken)) {
      sendJson(req, res, 401, { error: 'invalid_token' }, { 'WWW-Authenticate': 'Bearer realm="metrics"' });
      return;
    }
  }
  try {
    const { contentType, body } = await renderMetrics();
    send(req, res, 200, contentType, body);
  } catch {
    sendJson(req, res, 500, { success: false, error: 'internal error', code: 'internal_error' });
  }
}
