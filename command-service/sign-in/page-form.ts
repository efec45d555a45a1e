// The bodies of the sign-in pages' forms (application/x-www-form-urlencoded), and the parsing of
// name=value pairs shared with the authorization request kept in the flow cookie.
//
// URLSearchParams, not qs: the forms know only flat names (`a[b]=c` is a field named `a[b]`), a
// repeated name keeps all its values (so a repeat can be refused rather than one value silently
// winning), and the result has no prototype (a field named __proto__ is just a field).
import { PayloadTooLargeError } from '../../shared/errors.js';
import { UnsupportedMediaTypeError } from '../../shared/http/http-errors.js';
import type { HttpContext, HttpMiddleware } from '../../shared/http/http-state.js';

export type FormFields = Readonly<Record<string, string | readonly string[] | undefined>>;

/** Far above any form of these pages (the largest field is a password of at most 1024 characters). */
export const PAGE_FORM_LIMIT_BYTES = 16 * 1024;

const FORM_TYPE = 'application/x-www-form-urlencoded';

/** name=value pairs, as Koa parses a query string; a name sent more than once maps to all its values. */
export function parseFields(text: string): FormFields {
  const fields = Object.create(null) as Record<string, string | string[]>;
  for (const [name, value] of new URLSearchParams(text)) {
    const previous = fields[name];
    fields[name] = previous === undefined ? value : Array.isArray(previous) ? [...previous, value] : [previous, value];
  }
  return fields;
}

/** A single field's value; '' when absent or repeated (no form of ours repeats a field). */
export function field(fields: FormFields, name: string): string {
  const value = fields[name];
  return typeof value === 'string' ? value : '';
}

export async function readFormFields(ctx: HttpContext, limitBytes = PAGE_FORM_LIMIT_BYTES): Promise<FormFields> {
  if (ctx.request.length === undefined && ctx.get('transfer-encoding') === '') return parseFields('');
  if (ctx.request.type.trim().toLowerCase() !== FORM_TYPE) {
    throw new UnsupportedMediaTypeError('the form must be sent as application/x-www-form-urlencoded');
  }
  const encoding = ctx.get('content-encoding').trim().toLowerCase();
  if (encoding !== '' && encoding !== 'identity') throw new UnsupportedMediaTypeError('compressed forms are not supported');
  const declared = ctx.request.length;
  if (declared !== undefined && declared > limitBytes) throw new PayloadTooLargeError(`the form exceeds ${limitBytes} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limitBytes) throw new PayloadTooLargeError(`the form exceeds ${limitBytes} bytes`);
    chunks.push(chunk);
  }
  return parseFields(Buffer.concat(chunks).toString('utf8'));
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
