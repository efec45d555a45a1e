// Request validation with ajv. The JSON Schemas given here are the same objects the OpenAPI
// document publishes, so what is documented is what is enforced. (The create-pass body has its
// own validator next to its schema, parseCreatePassRequest in shared/domain/pass-request.ts.)
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { ValidationError } from '../errors.js';
import type { HttpMiddleware } from './http-state.js';
import { UNSTORABLE_TEXT, findUnstorableParameter } from './storable-text.js';

export type JsonSchema = Readonly<Record<string, unknown>>;

// JSON Schema 2020-12, the dialect of OpenAPI 3.1.
const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
addFormatsModule.default(ajv);
const compiled = new WeakMap<object, ValidateFunction>();

function compile(schema: JsonSchema): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

/** `/a/0/b` -> `a[0].b`, for messages a client can read. */
function fieldPath(instancePath: string): string {
  return instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : path ? `${path}.${part}` : part), '');
}

function describe(error: ErrorObject, subject: string): string {
  const at = fieldPath(error.instancePath);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'additionalProperties':
      return `unknown ${subject === 'query' ? 'parameter' : 'field'} '${[at, String(params.additionalProperty)].filter(Boolean).join('.')}'`;
    case 'required':
      return `missing required ${subject === 'query' ? 'parameter' : 'field'} '${[at, String(params.missingProperty)].filter(Boolean).join('.')}'`;
    default:
      return `${at ? `'${at}'` : subject} ${error.message ?? 'is invalid'}`;
  }
}

/** Throws a ValidationError listing every problem; returns the value typed as T otherwise. */
export function validate<T>(schema: JsonSchema, value: unknown, subject: 'body' | 'query' = 'body'): T {
  const check = compile(schema);
  if (check(value)) return value as T;
  const details = [...new Set((check.errors ?? []).map((e) => describe(e, subject)))];
  throw new ValidationError(`invalid request ${subject}: ${details.join('; ')}`, details);
}

/** The query of an endpoint that takes no parameters: any parameter is refused as unknown. */
export const NO_QUERY_PARAMETERS: JsonSchema = { type: 'object', additionalProperties: false, properties: {} };

/**
 * Query parameters arrive as strings. Parameters the schema declares as integers are converted
 * only when they are plain decimal integers (so `0x10` and `1e1` stay strings and fail), a
 * repeated parameter is refused, a name or value PostgreSQL cannot store (storable-text.ts) is
 * refused, and the result is validated like a body.
 */
export function validateQuery(schema: JsonSchema): HttpMiddleware {
  compile(schema);
  const properties = (schema.properties ?? {}) as Record<string, { type?: string; default?: unknown }>;
  return async function checkQuery(ctx, next) {
    const unstorable = findUnstorableParameter(ctx.query);
    if (unstorable !== null) {
      throw new ValidationError(unstorable.name === null ? `query parameter names ${UNSTORABLE_TEXT}` : `query parameter '${unstorable.name}' ${UNSTORABLE_TEXT}`);
    }
    const query: Record<string, unknown> = {};
    for (const [name, raw] of Object.entries(ctx.query)) {
      if (Array.isArray(raw)) throw new ValidationError(`query parameter '${name}' must be given once`);
      const type = properties[name]?.type;
      query[name] = type === 'integer' && raw !== undefined && /^-?\d{1,15}$/.test(raw) ? Number(raw) : raw;
    }
    for (const [name, property] of Object.entries(properties)) {
      if (query[name] === undefined && property.default !== undefined) query[name] = property.default;
    }
    ctx.state.query = validate(schema, query, 'query');
    await next();
  };
}
