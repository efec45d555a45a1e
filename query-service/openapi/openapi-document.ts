// GET /api/v1/openapi.json: the OpenAPI 3.1 description of the resource API, assembled from the
// very schemas that validate requests (createPassRequestSchema, the list query schemas) and the
// response schemas the end-to-end tests check answers against.
import { createPassRequestSchema } from '../../shared/domain/pass-request.js';
import {
  bearerErrorSchema,
  businessErrorSchema,
  facilityListSchema,
  facilitySchema,
  orgPassSchema,
  pageSchema,
  passCreateResponseSchema,
  quotaErrorSchema,
  rateLimitErrorSchema,
  revokeResponseSchema,
} from '../../shared/http/api-schemas.js';
import { userApiPaths, userApiSchemas, userApiSecuritySchemes } from './user-api-openapi.js';
import type { JsonSchema } from '../../shared/http/schema-validation.js';
import { listPassesQuerySchema } from '../org-passes/list-org-passes.js';

export const OPENAPI_VERSION = '1.0.0';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown) => ({ 'application/json': { schema } });
const response = (description: string, schema: unknown, headers?: Record<string, unknown>) => ({
  description,
  content: json(schema),
  ...(headers ? { headers } : {}),
});

const noStore = { 'Cache-Control': { description: 'Always `no-store`.', schema: { type: 'string', const: 'no-store' } } };

const integerHeader = (description: string) => ({ description, schema: { type: 'integer' } });
const rateLimited = response('Rate limited (300 requests per minute per source IP; escalating lockouts).', ref('RateLimitError'), {
  'Retry-After': integerHeader('Seconds to wait.'),
  RateLimit: { description: '`limit=<n>, remaining=0, reset=<seconds>`.', schema: { type: 'string' } },
  'RateLimit-Policy': { description: '`<limit>;w=<window seconds>`.', schema: { type: 'string' } },
  'RateLimit-Limit': integerHeader('Requests allowed per window.'),
  'RateLimit-Remaining': integerHeader('Always 0 on a 429.'),
  'RateLimit-Reset': integerHeader('Seconds until the limit resets.'),
  'X-RateLimit-Reset': integerHeader('Epoch time (seconds) at which the limit resets.'),
});
const challenge = {
  'WWW-Authenticate': { description: 'Bearer challenge (RFC 6750).', schema: { type: 'string' } },
};
const unauthorized = response('Missing, malformed, unknown, expired, revoked or IP-restricted API key.', ref('BearerError'), challenge);
const forbidden = (scope: string) => response(`The key lacks the scope \`${scope}\` (named in the challenge).`, ref('BearerError'), challenge);
const businessError = (description: string) => response(description, ref('BusinessError'));

/** The query schema's properties as OpenAPI query parameters. */
function queryParameters(schema: JsonSchema): unknown[] {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...rest } = property as { description?: string };
    return { name, in: 'query', required: false, description, schema: rest };
  });
}

export function buildOpenApiDocument(): Record<string, unknown> {
  const security = [{ apiKeyBearer: [] }, { apiKeyHeader: [] }];
  return {
    openapi: '3.1.0',
    info: {
      title: 'Guest-pass service: organization API and user-delegated API',
      version: OPENAPI_VERSION,
      description:
        'Organization-level server-to-server API (`/api/v1/org/*`): authenticate with an organization API key ' +
        '(`svc_sk_...`) as `Authorization: Bearer` or `X-API-Key`. User-delegated API (`/api/v1/passes`, ' +
        '`/api/v1/invites`, `/api/oauth/userinfo`): an OAuth access token as `Authorization: Bearer`. Every response carries `Cache-Control: no-store`. Business errors ' +
        'are `{success: false, error, code}`; clients branch on `code`. Unknown body fields and unknown query ' +
        'parameters are rejected with 400.',
    },
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    servers: [{ url: '/' }],
    security,
    paths: {
      '/api/v1/org/passes': {
        get: {
          operationId: 'listOrganizationPasses',
          summary: 'Every pass of the organization, newest first.',
          security,
          parameters: queryParameters(listPassesQuerySchema),
          responses: {
            200: response('A page of passes.', ref('OrgPassPage'), noStore),
            400: businessError('Bad `limit`, `cursor` (altered or from another query) or unknown parameter.'),
            401: unauthorized,
            403: forbidden('org:passes:read'),
            429: rateLimited,
          },
        },
        post: {
          operationId: 'createOrganizationPasses',
          summary: 'Create 1 to 10 passes; attributed to and counted against the admin who created the key.',
          security,
          requestBody: { required: true, content: json(ref('CreatePassRequest')) },
          responses: {
            201: response('Passes created.', ref('PassCreateResponse'), noStore),
            400: businessError('Validation failed, unknown field or malformed JSON.'),
            401: unauthorized,
            402: response('The monthly invite allowance cannot fit the batch (all or nothing).', ref('QuotaError')),
            403: forbidden('org:passes:write'),
            404: businessError('Facility not found in the organization.'),
            409: businessError('Facility deactivated or suspended.'),
            413: businessError('Body larger than 64 KiB.'),
            415: businessError('Body is not JSON.'),
            429: rateLimited,
          },
        },
      },
      '/api/v1/org/passes/{public_id}': {
        delete: {
          operationId: 'revokeOrganizationPass',
          summary: 'Revoke any active pass of the organization.',
          security,
          parameters: [{ name: 'public_id', in: 'path', required: true, schema: { type: 'string', pattern: '^gst_' } }],
          responses: {
            200: response('Revoked.', ref('RevokeResponse'), noStore),
            401: unauthorized,
            403: forbidden('org:passes:write'),
            404: businessError('No such pass in the organization.'),
            409: businessError('The pass is no longer active.'),
            429: rateLimited,
          },
        },
      },
      '/api/v1/org/facilities': {
        get: {
          operationId: 'listOrganizationFacilities',
          summary: "The organization's facilities.",
          security,
          responses: {
            200: response('The facilities.', ref('FacilityList'), noStore),
            400: businessError('Unknown query parameter.'),
            401: unauthorized,
            403: forbidden('org:facilities:read'),
            429: rateLimited,
          },
        },
      },
      '/api/v1/openapi.json': {
        get: {
          operationId: 'getOpenApiDocument',
          summary: 'This document.',
          security: [],
          responses: { 200: { description: 'OpenAPI 3.1 document.', content: json({ type: 'object' }) } },
        },
      },
      ...userApiPaths(),
    },
    components: {
      securitySchemes: {
        apiKeyBearer: { type: 'http', scheme: 'bearer', bearerFormat: 'svc_sk_<secret>', description: 'Organization API key.' },
        apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'Organization API key.' },
        ...userApiSecuritySchemes,
      },
      schemas: {
        CreatePassRequest: createPassRequestSchema as JsonSchema,
        PassCreateResponse: passCreateResponseSchema,
        RevokeResponse: revokeResponseSchema,
        OrgPass: orgPassSchema,
        OrgPassPage: pageSchema(ref('OrgPass')),
        Facility: facilitySchema,
        FacilityList: { ...facilityListSchema, properties: { success: { const: true }, facilities: { type: 'array', items: ref('Facility') } } },
        BearerError: bearerErrorSchema,
        BusinessError: businessErrorSchema,
        QuotaError: quotaErrorSchema,
        RateLimitError: rateLimitErrorSchema,
        ...userApiSchemas,
      },
    },
  };
}
