// application/x-www-form-urlencoded bodies, read once for every endpoint that takes a form (the
// OAuth protocol endpoints and the sign-in pages).
//
// URLSearchParams, not qs: a form knows only flat names (`a[b]=c` is a field named `a[b]`), a
// repeated name keeps all its values (so a repeat can be refused rather than one value silently
// winning), and the result has no prototype (a field named __proto__ is just a field).
import type { HttpContext } from './http-state.js';
import { findUnstorableParameter } from './storable-text.js';

export type FormFields = Readonly<Record<string, string | readonly string[] | undefined>>;

const FORM_TYPE = 'application/x-www-form-urlencoded';

/** name=value pairs, as Koa parses a query string; a name sent more than once maps to all its values. */
export function parseFormFields(text: string): FormFields {
  const fields = Object.create(null) as Record<string, string | string[]>;
  for (const [name, value] of new URLSearchParams(text)) {
    const previous = fields[name];
    fields[name] = previous === undefined ? value : Array.isArray(previous) ? [...previous, value] : [previous, value];
  }
  return fields;
}

/** How a caller reports a body it refuses, in its own error family. */
export interface FormBodyErrors {
  readonly wrongType: () => Error;
  readonly compressed: () => Error;
  readonly tooLarge: () => Error;
  /** A field (`name`) or a field name (`null`) PostgreSQL cannot store (storable-text.ts). */
  readonly unstorable: (name: string | null) => Error;
}

/**
 * Reads and parses the body, refusing other media types, compression, more than `limitBytes` and
 * text PostgreSQL cannot store.
 */
export async function readFormBody(ctx: HttpContext, limitBytes: number, errors: FormBodyErrors): Promise<FormFields> {
  if (ctx.request.type.trim().toLowerCase() !== FORM_TYPE) {
    throw errors.wrongType();
  }
  const encoding = ctx.get('content-encoding').trim().toLowerCase();
  if (encoding !== '' && encoding !== 'identity') throw errors.compressed();
  const declared = ctx.request.length;
  if (declared !== undefined && declared > limitBytes) throw errors.tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limitBytes) throw errors.tooLarge();
    chunks.push(chunk);
  }
  const fields = parseFormFields(Buffer.concat(chunks).toString('utf8'));
  const unstorable = findUnstorableParameter(fields);
  if (unstorable !== null) throw errors.unstorable(unstorable.name);
  return fields;
}
