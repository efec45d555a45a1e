// The last middleware: a request no route answered is a 404 business error, rendered like any other.
import { NotFoundError } from '../errors.js';
import type { HttpMiddleware } from './http-state.js';

export function notFound(): HttpMiddleware {
  return async function noSuchEndpoint(ctx, next) {
    await next();
    if (ctx.status === 404 && ctx.body === undefined) throw new NotFoundError(`no endpoint ${ctx.method} ${ctx.path}`);
  };
}
