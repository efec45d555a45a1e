// GET /api/v1/openapi.json: the OpenAPI 3.1 description of the resource API, assembled from the
// very schemas that validate requests (createPassRequestSchema, the list query schemas) and the
// response schemas the end-to-end tests check answers against.
import { createPassRequestSchema } from '../../shared/domain/pass-request.js';
import {
  bearerErrorSchema,
  businessErrorSchema,
  facilitySchema,
  memberSchema,
  orgPassSchema,
  pageSchema,
  passCreateResponseSchema,
  quotaErrorSchema,
  rateLimitErrorSchema,
  revokeResponseSchema,
  successEnvelopeSchema,
} from '../../shared/http/api-schemas.js';
import { ORG_API_RATE_LIMIT } from '../../shared/http/rate-limit.js';
import type { JsonSchema } from '../../shared/http/schema-validation.js';
import { listPassesQuerySchema } from '../org-passes/list-org-passes.js';
import { listMembersQuerySchema } from '../members/list-members.js';
import { getMemberQuerySchema } from '../members/get-member.js';
import { orgAuditPageSchema, orgAuditQuerySchema } from '../audit/org-audit-events.js';
import { userApiPaths, userApiSchemas, userApiSecuritySchemes } from './user-api-openapi.js';
import {
  businessError,
  challenge,
  createPassesRequestBody,
  createPassesResponses,
  json,
  noStore,
  publicIdParameter,
  queryParameters,
  rateLimited,
  ref,
  response,
} from './openapi-fragments.js';

export const OPENAPI_VERSION = '1.0.0';

const rateLimitedOrg = rateLimited(`Rate limited (${ORG_API_RATE_LIMIT.points} requests per minute per source IP; escalating lockouts for a source that keeps sending while refused).`);
const unauthorized = response('Missing, malformed, unknown, expired, revoked or IP-restricted API key.', ref('BearerError'), challenge);
const forbidden = (scope: string) => response(`The key lacks the scope \`${scope}\` (named in the challenge).`, ref('BearerError'), challenge);
const memberForbidden = response(
  'The API key lacks `org:members:read`, or asks for `email`/`phone` without `org:members:contact:read` (the challenge names the ' +
    "missing scope); or the user token lacks `members:read`, or its user no longer holds the organization's employee-view role.",
  ref('BearerError'),
  challenge,
);
const memberUnauthorized = response('Missing, malformed, unknown, expired, revoked or IP-restricted API key, or an invalid access token.', ref('BearerError'), challenge);

export function buildOpenApiDocument(): Record<string, unknown> {
  const security = [{ apiKeyBearer: [] }, { apiKeyHeader: [] }];
  const memberSecurity = [...security, { accessToken: ['members:read'] }];
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
            429: rateLimitedOrg,
          },
        },
        post: {
          operationId: 'createOrganizationPasses',
          summary: 'Create 1 to 10 passes; attributed to and counted against the admin who created the key.',
          security,
          requestBody: createPassesRequestBody,
          responses: { ...createPassesResponses, 401: unauthorized, 403: forbidden('org:passes:write'), 429: rateLimitedOrg },
        },
      },
      '/api/v1/org/passes/{public_id}': {
        delete: {
          operationId: 'revokeOrganizationPass',
          summary: 'Revoke any active pass of the organization.',
          security,
          parameters: [publicIdParameter],
          responses: {
            200: response('Revoked.', ref('RevokeResponse'), noStore),
            400: businessError('Unknown query parameter.'),
            401: unauthorized,
            403: forbidden('org:passes:write'),
            404: businessError('No such pass in the organization.'),
            409: businessError('The pass is no longer active.'),
            429: rateLimitedOrg,
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
            429: rateLimitedOrg,
          },
        },
      },
      '/api/v1/org/members': {
        get: {
          operationId: 'listOrganizationMembers',
          summary:
            'The member directory, newest first (active members by default). API key: `org:members:read` (basic fields), plus ' +
            '`org:members:contact:read` for `email` and `phone`. Or a user access token with `members:read` whose user holds ' +
            "the organization's employee-view role: every field, the user's organization.",
          security: memberSecurity,
          parameters: queryParameters(listMembersQuerySchema),
          responses: {
            200: response('A page of members; `total` is null while `search` is set.', ref('MemberPage'), noStore),
            400: businessError('Bad `limit`, `status`, `cursor` (altered or from another query), unknown member field (the message lists the allowed ones) or unknown parameter.'),
            401: memberUnauthorized,
            403: memberForbidden,
            429: rateLimitedOrg,
          },
        },
      },
      '/api/v1/org/members/{public_id}': {
        get: {
          operationId: 'getOrganizationMember',
          summary: 'One member of the organization, inactive ones included. Same credentials and field selection as the list.',
          security: memberSecurity,
          parameters: [{ name: 'public_id', in: 'path', required: true, schema: { type: 'string', pattern: '^emp_' } }, ...queryParameters(getMemberQuerySchema)],
          responses: {
            200: response('The member.', ref('MemberResponse'), noStore),
            400: businessError('Unknown member field (the message lists the allowed ones) or unknown parameter.'),
            401: memberUnauthorized,
            403: memberForbidden,
            404: businessError('No such member in the organization.'),
            429: rateLimitedOrg,
          },
        },
      },
      '/api/v1/org/audit/events': {
        get: {
          operationId: 'listOrganizationAuditEvents',
          summary:
            "The organization's own events from the audit log, oldest first, each with an RFC 9162 inclusion proof against the latest " +
            'signed tree head, and the consistency proof from the head the previous page (or `since_head`) was proved against. ' +
            'Sealed personal data stays sealed; a password hash is withheld (its leaf hash and proof remain). Verify offline with ' +
            '`guestpass audit verify --organization` and the keys at `/.well-known/audit-keys.json`. Scope `org:audit:read`.',
          security,
          parameters: queryParameters(orgAuditQuerySchema),
          responses: {
            200: response('A page of audit events; `next_cursor` continues from the last one, also once more are signed.', ref('OrgAuditPage'), noStore),
            400: businessError('Bad `limit`, `cursor` (altered or from another organization), unknown `since_head` or unknown parameter.'),
            401: unauthorized,
            403: forbidden('org:audit:read'),
            429: rateLimitedOrg,
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
        FacilityList: successEnvelopeSchema('facilities', { type: 'array', items: ref('Facility') }),
        Member: memberSchema,
        MemberPage: pageSchema(ref('Member')),
        MemberResponse: successEnvelopeSchema('member', ref('Member')),
        OrgAuditPage: orgAuditPageSchema,
        BearerError: bearerErrorSchema,
        BusinessError: businessErrorSchema,
        QuotaError: quotaErrorSchema,
        RateLimitError: rateLimitErrorSchema,
        ...userApiSchemas,
      },
    },
  };
}
