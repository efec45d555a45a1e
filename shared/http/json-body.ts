// Reads a JSON request body for the routes that take one: at most `limitBytes` (413 beyond,
// refused before reading when Content-Length already says so), JSON media types only (415),
// well-formed JSON only (400). A request without a body leaves `ctx.request.body` undefined,
// for the route's validation to reject with a clear message.
import { bodyParser } from '@koa/bodyparser';
import { PayloadTooLargeError, ValidationError } from '../errors.js';
import { UnsupportedMediaTypeError } from './http-errors.js';
import type { HttpMiddleware } from './http-state.js';

export const DEFAULT_BODY_LIMIT_BYTES = 64 * 1024;

const JSON_TYPES = ['application/json', '+json'];

function hasBody(ctx: Parameters<HttpMiddleware>[0]): boolean {
  return ctx.get('transfer-encoding') !== '' || (ctx.request.length ?? 0) > 0;
}

function translate(error: unknown, limitBytes: number): Error {
  const e = error as { status?: number; type?: string };
  if (e.status === 413) return new PayloadTooLargeError(`request body exceeds ${limitBytes} bytes`);
  if (e.status === 415) return new UnsupportedMediaTypeError('unsupported content encoding');
  if (e.type === 'entity.parse.failed' || e.status === 400) {
    return new ValidationError('request body is not valid JSON (a JSON object is expected)');
  }
  return error instanceof Error ? error : new Error(String(error));
}

export function jsonBody(limitBytes = DEFAULT_BODY_LIMIT_BYTES): HttpMiddleware {
  const parse = bodyParser({
    enableTypes: ['json'],
    jsonLimit: limitBytes,
    encoding: 'utf-8',
    onError: (error) => {
      throw translate(error, limitBytes);
    },
  });
  return async function readJsonBody(ctx, next) {
    if (!hasBody(ctx)) return next();
    const declared = ctx.request.length;
    if (declared !== undefined && declared > limitBytes) {
      throw new PayloadTooLargeError(`request body exceeds ${limitBytes} bytes`);
    }
    if (!ctx.is(JSON_TYPES)) {
      throw new UnsupportedMediaTypeError('request body must be JSON (Content-Type: application/json)');
    }
    await parse(ctx, next);
  };
}
