// Every request gets an id: a sane incoming X-Request-Id (from the gateway or the client) is
// kept, anything else is replaced by a fresh UUID. It is echoed on the response, bound to every
// log line and becomes the correlation id of the events the request causes.
import { randomUUID } from 'node:crypto';
import type { HttpMiddleware } from './http-state.js';

const SANE_REQUEST_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

export function requestId(): HttpMiddleware {
  return async function assignRequestId(ctx, next) {
    const incoming = ctx.get('x-request-id');
    ctx.state.requestId = SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.set('X-Request-Id', ctx.state.requestId);
    await next();
  };
}
