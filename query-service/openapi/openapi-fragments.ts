// The pieces both parts of the OpenAPI document (organization API, user-delegated API) describe
// their operations with: schema references, JSON responses, the shared headers and error answers,
// and query parameters taken from the schema that validates the query string.
import type { JsonSchema } from '../../shared/http/schema-validation.js';

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const json = (schema: unknown) => ({ 'application/json': { schema } });
export const response = (description: string, schema: unknown, headers?: Record<string, unknown>) => ({
  description,
  content: json(schema),
  ...(headers ? { headers } : {}),
});

export const noStore = { 'Cache-Control': { description: 'Always `no-store`.', schema: { type: 'string', const: 'no-store' } } };
export const challenge = { 'WWW-Authenticate': { description: 'Bearer challenge (RFC 6750).', schema: { type: 'string' } } };
const integerHeader = (description: string) => ({ description, schema: { type: 'integer' } });

/** The 429 of either bucket; `description` names the bucket's limit. */
export const rateLimited = (description: string) =>
  response(description, ref('RateLimitError'), {
    'Retry-After': integerHeader('Seconds to wait.'),
    RateLimit: { description: '`limit=<n>, remaining=0, reset=<seconds>`.', schema: { type: 'string' } },
    'RateLimit-Policy': { description: '`<limit>;w=<window seconds>`.', schema: { type: 'string' } },
    'RateLimit-Limit': integerHeader('Requests allowed per window.'),
    'RateLimit-Remaining': integerHeader('Always 0 on a 429.'),
    'RateLimit-Reset': integerHeader('Seconds until the limit resets.'),
    'X-RateLimit-Reset': integerHeader('Epoch time (seconds) at which the limit resets.'),
  });

export const businessError = (description: string) => response(description, ref('BusinessError'));

/** Creating passes, one handler behind either API's authentication: the API adds its 401, 403 and 429. */
export const createPassesRequestBody = { required: true, content: json(ref('CreatePassRequest')) };
export const createPassesResponses = {
  201: response('Passes created.', ref('PassCreateResponse'), noStore),
  400: businessError('Validation failed, unknown field or query parameter, malformed JSON, NUL or unpaired surrogate in text, or undecodable Content-Encoding.'),
  402: response('The monthly invite allowance cannot fit the batch (all or nothing).', ref('QuotaError')),
  404: businessError('Facility not found in the organization.'),
  409: businessError('Facility deactivated or suspended.'),
  413: businessError('Body larger than 64 KiB.'),
  415: businessError('Body is not JSON (`application/json` or any `+json` type) or has an unsupported Content-Encoding.'),
};
export const publicIdParameter = { name: 'public_id', in: 'path', required: true, schema: { type: 'string', pattern: '^gst_' } };

/** The query schema's properties as OpenAPI query parameters. */
export function queryParameters(schema: JsonSchema): unknown[] {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...rest } = property as { description?: string };
    return { name, in: 'query', required: false, description, schema: rest };
  });
}
