// What the middleware chain puts on `ctx.state` for the layers after it.
import type { Context, Middleware, ParameterizedContext } from 'koa';
import type { Logger } from '../logger.js';
import type { Principal } from '../auth/principal.js';

export interface HttpState {
  /** Set by requestId(): the accepted X-Request-Id or a fresh UUID; the correlation id of events. */
  requestId: string;
  /** Set by requestLogger(): a child logger bound to the request id. */
  log: Logger;
  /** Set by an authentication middleware; absent on public endpoints. */
  principal?: Principal;
  /** Set by validateQuery(): the query parameters, converted and checked. */
  query?: Record<string, unknown>;
}

export type HttpContext = ParameterizedContext<HttpState, Context>;
export type HttpMiddleware = Middleware<HttpState, Context>;
