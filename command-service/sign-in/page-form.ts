// The bodies of the sign-in pages' forms (application/x-www-form-urlencoded, shared/http/form-body.ts),
// refused with the pages' own 415 and 413.
import { PayloadTooLargeError, ValidationError } from '../../shared/errors.js';
import { UNSTORABLE_TEXT } from '../../shared/http/storable-text.js';
import { UnsupportedMediaTypeError } from '../../shared/http/http-errors.js';
import type { HttpContext, HttpMiddleware } from '../../shared/http/http-state.js';
import { parseFormFields, readFormBody, type FormBodyErrors, type FormFields } from '../../shared/http/form-body.js';

export type { FormFields };

/** Far above any form of these pages (the largest field is a password of at most 1024 characters). */
export const PAGE_FORM_LIMIT_BYTES = 16 * 1024;

/** A single field's value; '' when absent or repeated (no form of ours repeats a field). */
export function field(fields: FormFields, name: string): string {
  const value = fields[name];
  return typeof value === 'string' ? value : '';
}

const PAGE_FORM_ERRORS: FormBodyErrors = {
  wrongType: () => new UnsupportedMediaTypeError('the form must be sent as application/x-www-form-urlencoded'),
  compressed: () => new UnsupportedMediaTypeError('compressed forms are not supported'),
  tooLarge: () => new PayloadTooLargeError(`the form exceeds ${PAGE_FORM_LIMIT_BYTES} bytes`),
  unstorable: (name) => new ValidationError(`${name ?? 'field names'} ${UNSTORABLE_TEXT}`),
};

export async function readFormFields(ctx: HttpContext): Promise<FormFields> {
  // A POST without a body (a bare button) is an empty form, whatever its declared type.
  if (ctx.request.length === undefined && ctx.get('transfer-encoding') === '') return parseFormFields('');
  return readFormBody(ctx, PAGE_FORM_LIMIT_BYTES, PAGE_FORM_ERRORS);
}

/**
 * Middleware: reads the form into `ctx.request.body`, so SignInKit.checkCsrf finds the `csrf`
 * field. For the routes of the sign-in methods that take a form (the federated button).
 */
export function pageForm(): HttpMiddleware {
  return async function readPageForm(ctx, next) {
    ctx.request.body = await readFormFields(ctx);
    await next();
  };
}
