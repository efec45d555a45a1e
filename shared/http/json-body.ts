// Reads a JSON request body for the routes that take one: at most `limitBytes` (413 beyond,
// refused before reading when Content-Length already says so), JSON media types only (415),
// well-formed JSON only (400), a Content-Encoding it knows (415) that decodes (400), and no text
// PostgreSQL cannot store (400, storable-text.ts). A request without a body leaves
// `ctx.request.body` undefined, for the route's validation to reject with a clear message.
import { bodyParser } from '@koa/bodyparser';
import { PayloadTooLargeError, ValidationError } from '../errors.js';
import { UnsupportedMediaTypeError } from './http-errors.js';
import type { HttpMiddleware } from './http-state.js';
import { refuseUnstorableBody } from './storable-text.js';

export const DEFAULT_BODY_LIMIT_BYTES = 64 * 1024;

// Also what the parser parses: it knows only a few +json types itself, and would leave the body of
// any other (application/problem+json, a vendor type) unparsed after the check below let it in.
// The list replaces the parser's own element by element (lodash.merge), so application/json stays first.
const JSON_TYPES = ['application/json', '+json'];

function hasBody(ctx: Parameters<HttpMiddleware>[0]): boolean {
  return ctx.get('transfer-encoding') !== '' || (ctx.request.length ?? 0) > 0;
}

/** zlib's errors (a body that is not the gzip, deflate or br it claims to be) carry errno and code, no status. */
function isDecodingError(error: unknown): boolean {
  const e = error as { status?: unknown; errno?: unknown; code?: unknown };
  return e.status === undefined && typeof e.errno === 'number' && typeof e.code === 'string';
}

function translate(error: unknown, limitBytes: number, encoding: string): Error {
  const e = error as { status?: number; type?: string };
  if (e.status === 413) return new PayloadTooLargeError(`request body exceeds ${limitBytes} bytes`);
  if (e.status === 415) return new UnsupportedMediaTypeError('unsupported content encoding');
  if (e.type === 'entity.parse.failed' || e.status === 400) {
    return new ValidationError('request body is not valid JSON (a JSON object is expected)');
  }
  // Only an encoding the parser accepted (gzip, deflate, br) gets here, so echoing it is safe.
  if (encoding !== '' && isDecodingError(error)) {
    return new ValidationError(`request body could not be decoded (Content-Encoding: ${encoding})`);
  }
  return error instanceof Error ? error : new Error(String(error));
}

export function jsonBody(limitBytes = DEFAULT_BODY_LIMIT_BYTES): HttpMiddleware {
  const parse = bodyParser({
    enableTypes: ['json'],
    extendTypes: { json: JSON_TYPES },
    jsonLimit: limitBytes,
    encoding: 'utf-8',
    onError: (error, ctx) => {
      throw translate(error, limitBytes, ctx.get('content-encoding'));
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
    await parse(ctx, async () => {
      refuseUnstorableBody(ctx.request.body);
      await next();
    });
  };
}
