// The application/x-www-form-urlencoded body of the protocol endpoints (RFC 6749 §3.2, RFC 7009
// §2.1, RFC 7662 §2.1), and the reading of single parameters from it.
//
// Parsed here with URLSearchParams rather than @koa/bodyparser: its qs decoding turns `a[b]=c`
// into nested objects, while the protocol knows only flat name=value pairs. A repeated name is
// kept as an array, so a repeat can be refused as invalid_request (RFC 6749 §3.2) instead of one
// value silently winning.
import type { FormParameters } from '../../shared/oauth/client-auth.js';
import { InvalidRequest } from '../../shared/oauth/oauth-errors.js';
import type { HttpContext } from '../../shared/http/http-state.js';

/** Far above any legitimate request (the largest field is a redirect_uri of at most 2000 characters or a JWT). */
export const FORM_BODY_LIMIT_BYTES = 16 * 1024;

const FORM_TYPE = 'application/x-www-form-urlencoded';

function tooLarge(): InvalidRequest {
  return new InvalidRequest('The request body is too large.');
}

export async function readFormBody(ctx: HttpContext, limitBytes = FORM_BODY_LIMIT_BYTES): Promise<FormParameters> {
  if (ctx.request.type.trim().toLowerCase() !== FORM_TYPE) {
    throw new InvalidRequest('The request body must be application/x-www-form-urlencoded.');
  }
  const encoding = ctx.get('content-encoding').trim().toLowerCase();
  if (encoding !== '' && encoding !== 'identity') throw new InvalidRequest('Compressed request bodies are not supported.');
  const declared = ctx.request.length;
  if (declared !== undefined && declared > limitBytes) throw tooLarge();

  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limitBytes) throw tooLarge();
    chunks.push(chunk);
  }
  return parseForm(Buffer.concat(chunks).toString('utf8'));
}

/** name=value pairs; a name sent more than once maps to all its values. */
export function parseForm(text: string): FormParameters {
  // No prototype: a field named __proto__ or constructor is just a field.
  const form = Object.create(null) as Record<string, string | string[]>;
  for (const [name, value] of new URLSearchParams(text)) {
    const previous = form[name];
    form[name] = previous === undefined ? value : Array.isArray(previous) ? [...previous, value] : [previous, value];
  }
  return form;
}

/** One parameter: undefined when absent or empty (RFC 6749 §3.2: an empty value is omitted); invalid_request when repeated. */
export function optionalParameter(form: FormParameters, name: string): string | undefined {
  const value = form[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new InvalidRequest(`The ${name} parameter is repeated.`);
  return value === '' ? undefined : value;
}

export function requiredParameter(form: FormParameters, name: string): string {
  const value = optionalParameter(form, name);
  if (value === undefined) throw new InvalidRequest(`The ${name} parameter is missing.`);
  return value;
}
