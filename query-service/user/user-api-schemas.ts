// JSON Schemas of what the user-delegated endpoints answer, beside the shared ones
// (shared/http/api-schemas.ts: Pass, create and revoke responses, errors). The end-to-end tests
// check every answer against them, and the OpenAPI document can publish them.
import { pageSchema, passSchema, successEnvelopeSchema } from '../../shared/http/api-schemas.js';
import type { JsonSchema } from '../../shared/http/schema-validation.js';

const count = { type: 'integer', minimum: 0 } as const;

export const usageSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['used', 'limit', 'remaining'],
  description: "The user's monthly invite allowance (current UTC month).",
  properties: { used: count, limit: count, remaining: count },
};

/** The page envelope of Pass, with `usage` on the first page only. */
export const userPassPageSchema: JsonSchema = (() => {
  const page = pageSchema(passSchema);
  return { ...page, properties: { ...(page.properties as Record<string, JsonSchema>), usage: usageSchema } };
})();

export const userPassResponseSchema: JsonSchema = successEnvelopeSchema('pass', passSchema);

export const inviteSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'role', 'status', 'created_at', 'organization'],
  properties: {
    id: { type: 'integer' },
    role: { type: ['string', 'null'], description: 'Role being offered.' },
    status: { const: 'pending', description: 'Always `pending` in this listing.' },
    created_at: { type: ['string', 'null'], format: 'date-time' },
    organization: { type: ['string', 'null'], description: "Inviting organization's display name." },
  },
};

export const inviteListSchema: JsonSchema = successEnvelopeSchema('invites', { type: 'array', items: inviteSchema });

export const userInfoSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['sub'],
  properties: {
    sub: { type: 'string', description: 'The user; equals the id_token `sub`.' },
    name: { type: 'string', description: 'Scope `profile`.' },
    given_name: { type: 'string', description: 'Scope `profile`.' },
    family_name: { type: 'string', description: 'Scope `profile`.' },
    email: { type: 'string', description: 'Scope `email`.' },
    email_verified: { type: 'boolean', description: 'Scope `email`. Always false: the service does not verify addresses.' },
  },
};
