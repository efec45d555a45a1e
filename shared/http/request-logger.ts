// One pino line per request, bound to the request id. Only method, path (never the query
// string: it carries search terms, i.e. personal data), status, duration and who called are
// logged; headers and bodies never are, so credentials cannot leak (REDACTED_PATHS in
// shared/logger.ts is the second line of defence for anything logged elsewhere).
import type { Logger } from '../logger.js';
import type { HttpMiddleware } from './http-state.js';

export function requestLogger(logger: Logger): HttpMiddleware {
  return async function logRequest(ctx, next) {
    const started = process.hrtime.bigint();
    const log = logger.child({ reqId: ctx.state.requestId });
    ctx.state.log = log;
    try {
      await next();
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const principal = ctx.state.principal;
      const status = ctx.status;
      // A 503 is a part down or a process starting or stopping: logged once as an error where it
      // began (shared/outage/), each request only as a warning.
      log[status === 503 ? 'warn' : status >= 500 ? 'error' : 'info'](
        {
          method: ctx.method,
          path: ctx.path,
          status,
          ms: Math.round(ms * 100) / 100,
          ...(principal?.kind === 'apiKey' ? { keyId: principal.keyId, orgId: principal.orgId } : {}),
          ...(principal?.kind === 'user' ? { userId: principal.userId, orgId: principal.orgId } : {}),
        },
        'request',
      );
    }
  };
}
