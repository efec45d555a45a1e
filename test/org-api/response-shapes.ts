// Checks answers against the JSON Schemas the OpenAPI document publishes (shared/http/api-schemas.ts).
import { expect } from 'chai';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { JsonSchema } from '../../shared/http/schema-validation.js';

const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormatsModule.default(ajv);
const compiled = new WeakMap<object, ValidateFunction>();

export function expectShape(body: unknown, schema: JsonSchema, what = 'response'): void {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  const ok = validate(body);
  expect(ok, `${what} does not match its schema: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body)}`).to.equal(true);
}
