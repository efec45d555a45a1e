// Reads the body of a sign-in method's POST before the CSRF check looks at it: JSON from the
// browser script's fetch() calls, or a urlencoded form (the CSRF field of a plain form, or an
// assertion posted as a form so the browser itself follows the redirect that ends sign-in).
// Bounded like jsonBody(); anything else is 415.
import { bodyParser } from '@koa/bodyparser';
import { PayloadTooLargeError, ValidationError } from '../../../shared/errors.js';
import { UnsupportedMediaTypeError } from '../../../shared/http/http-errors.js';
import type { HttpMiddleware } from '../../../shared/http/http-state.js';
import { refuseUnstorableBody } from '../../../shared/http/storable-text.js';

/** An attestation object with a certificate chain is a few KiB; this leaves room and bounds work. */
export const SIGN_IN_BODY_LIMIT_BYTES = 64 * 1024;

export function formOrJsonBody(limitBytes = SIGN_IN_BODY_LIMIT_BYTES): HttpMiddleware {
  const parse = bodyParser({
    enableTypes: ['json', 'form'],
    jsonLimit: limitBytes,
    formLimit: limitBytes,
    encoding: 'utf-8',
    onError: (error) => {
      const e = error as { status?: number };
      if (e.status === 413) throw new PayloadTooLargeError(`request body exceeds ${limitBytes} bytes`);
      throw new ValidationError('request body is malformed');
    },
  });
  return async function readSignInBody(ctx, next) {
    const hasBody = ctx.get('transfer-encoding') !== '' || (ctx.request.length ?? 0) > 0;
    if (!hasBody) return next();
    if ((ctx.request.length ?? 0) > limitBytes) throw new PayloadTooLargeError(`request body exceeds ${limitBytes} bytes`);
    if (!ctx.is(['application/json', '+json', 'application/x-www-form-urlencoded'])) {
      throw new UnsupportedMediaTypeError('request body must be JSON or a form');
    }
    await parse(ctx, async () => {
      refuseUnstorableBody(ctx.request.body);
      await next();
    });
  };
}
