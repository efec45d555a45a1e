// The user-delegated endpoints' part of the OpenAPI document (OAuth access token): paths, the
// response schemas they add, and the security scheme. Built from the same schemas that validate
// the requests and that the end-to-end tests check the answers against. buildOpenApiDocument()
// spreads these into its `paths`, `components.schemas` and `components.securitySchemes`.
import { USER_API_RATE_LIMIT } from '../../shared/auth/access-token-auth.js';
import { passSchema } from '../../shared/http/api-schemas.js';
import type { JsonSchema } from '../../shared/http/schema-validation.js';
import { listPassesQuerySchema } from '../org-passes/list-org-passes.js';
import { inviteListSchema, inviteSchema, usageSchema, userInfoSchema, userPassPageSchema, userPassResponseSchema } from '../user/user-api-schemas.js';
import {
  businessError,
  challenge,
  createPassesRequestBody,
  createPassesResponses,
  noStore,
  publicIdParameter,
  queryParameters,
  rateLimited,
  ref,
  response,
} from './openapi-fragments.js';

const unauthorized = response('Missing, malformed, expired or revoked access token (`invalid_token`).', ref('BearerError'), challenge);
const forbidden = (scope: string, role: boolean) =>
  response(
    `The token lacks the scope \`${scope}\`${role ? ", or the user no longer holds the organization's self-invite role" : ''} (the challenge names \`${scope}\`).`,
    ref('BearerError'),
    challenge,
  );
const rateLimitedUser = rateLimited(`Rate limited (${USER_API_RATE_LIMIT.points} requests per minute per user; back-pressure: retry after Retry-After, no lockout).`);

/** Each operation names the scope it needs (OpenAPI 3.1 allows scopes for an http bearer scheme). */
const security = (scope: string) => [{ accessToken: [scope] }];

export const userApiSecuritySchemes = {
  accessToken: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT (typ at+jwt)',
    description: 'OAuth 2.0 access token of the authorization-code flow with PKCE, sent as `Authorization: Bearer`; never in the URL.',
  },
} as const;

export const userApiSchemas: Record<string, JsonSchema> = {
  Pass: passSchema,
  Usage: usageSchema,
  UserPassPage: userPassPageSchema,
  UserPassResponse: userPassResponseSchema,
  Invite: inviteSchema,
  InviteList: inviteListSchema,
  UserInfo: userInfoSchema,
};

export function userApiPaths(): Record<string, unknown> {
  const userInfo = (method: 'get' | 'post') => ({
    operationId: method === 'get' ? 'getUserInfo' : 'postUserInfo',
    summary: 'OpenID Connect UserInfo: claims gated by the token scopes (POST is identical to GET).',
    security: security('openid'),
    responses: {
      200: response('`sub` always; `profile`: name, given_name, family_name; `email`: email, email_verified.', ref('UserInfo'), noStore),
      401: unauthorized,
      403: forbidden('openid', false),
      429: rateLimitedUser,
    },
  });
  return {
    '/api/v1/passes': {
      get: {
        operationId: 'listMyPasses',
        summary: "The signed-in user's own passes, newest first; `usage` on the first page.",
        security: security('passes:read'),
        parameters: queryParameters(listPassesQuerySchema),
        responses: {
          200: response('A page of passes.', ref('UserPassPage'), noStore),
          400: businessError('Bad `limit`, `cursor` (altered or from another query) or unknown parameter.'),
          401: unauthorized,
          403: forbidden('passes:read', true),
          429: rateLimitedUser,
        },
      },
      post: {
        operationId: 'createMyPasses',
        summary: "Create 1 to 10 passes, attributed to and counted against the signed-in user's monthly allowance.",
        security: security('passes:write'),
        requestBody: createPassesRequestBody,
        responses: { ...createPassesResponses, 401: unauthorized, 403: forbidden('passes:write', true), 429: rateLimitedUser },
      },
    },
    '/api/v1/passes/{public_id}': {
      get: {
        operationId: 'getMyPass',
        summary: "One of the signed-in user's passes.",
        security: security('passes:read'),
        parameters: [publicIdParameter],
        responses: {
          200: response('The pass.', ref('UserPassResponse'), noStore),
          401: unauthorized,
          403: forbidden('passes:read', true),
          404: businessError('No such pass created by the user.'),
          429: rateLimitedUser,
        },
      },
      delete: {
        operationId: 'revokeMyPass',
        summary: "Revoke one of the signed-in user's active passes.",
        security: security('passes:write'),
        parameters: [publicIdParameter],
        responses: {
          200: response('Revoked.', ref('RevokeResponse'), noStore),
          400: businessError('Unknown query parameter.'),
          401: unauthorized,
          403: forbidden('passes:write', true),
          404: businessError('No such pass created by the user.'),
          409: businessError('The pass is no longer active.'),
          429: rateLimitedUser,
        },
      },
    },
    '/api/v1/invites': {
      get: {
        operationId: 'listMyInvites',
        summary: 'Pending invitations addressed to the signed-in user (by user id or email), newest first.',
        security: security('invites:read'),
        responses: {
          200: response('The invitations.', ref('InviteList'), noStore),
          400: businessError('Unknown query parameter.'),
          401: unauthorized,
          403: forbidden('invites:read', true),
          429: rateLimitedUser,
        },
      },
    },
    '/api/oauth/userinfo': { get: userInfo('get'), post: userInfo('post') },
  };
}
