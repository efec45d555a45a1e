// The application/x-www-form-urlencoded body of the protocol endpoints (RFC 6749 §3.2, RFC 7009
// §2.1, RFC 7662 §2.1), refused as invalid_request, and the reading of single parameters from
// it: a repeated name is invalid_request (RFC 6749 §3.2) instead of one value silently winning.
import type { FormParameters } from '../../shared/oauth/client-auth.js';
import { InvalidRequest } from '../../shared/oauth/oauth-errors.js';
import type { HttpContext } from '../../shared/http/http-state.js';
import { readFormBody, type FormBodyErrors } from '../../shared/http/form-body.js';
import { UNSTORABLE_TEXT } from '../../shared/http/storable-text.js';

/** Far above any legitimate request (the largest field is a redirect_uri of at most 2000 characters or a JWT). */
export const FORM_BODY_LIMIT_BYTES = 16 * 1024;

const PROTOCOL_FORM_ERRORS: FormBodyErrors = {
  wrongType: () => new InvalidRequest('The request body must be application/x-www-form-urlencoded.'),
  compressed: () => new InvalidRequest('Compressed request bodies are not supported.'),
  tooLarge: () => new InvalidRequest('The request body is too large.'),
  // Generic: a protocol error description echoes nothing the client sent (and must be ASCII).
  unstorable: () => new InvalidRequest(`Parameters ${UNSTORABLE_TEXT}.`),
};

export function readProtocolForm(ctx: HttpContext, limitBytes = FORM_BODY_LIMIT_BYTES): Promise<FormParameters> {
  return readFormBody(ctx, limitBytes, PROTOCOL_FORM_ERRORS);
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
