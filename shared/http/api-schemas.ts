// JSON Schemas of what the resource API answers: resources, envelopes and the error shapes the
// error middleware renders. The OpenAPI document publishes them and the end-to-end tests check
// every response against them, so the description cannot drift from the behaviour.
import type { JsonSchema } from './schema-validation.js';

const nullable = (type: string, extra: Record<string, unknown> = {}): JsonSchema => ({ type: [type, 'null'], ...extra });

export const passSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: [
    'public_id', 'first_name', 'last_name', 'email', 'phone', 'status', 'created_at',
    'arrival_date', 'arrival_time', 'facility_id', 'facility_name',
  ],
  properties: {
    public_id: { type: 'string', pattern: '^gst_', description: 'Prefix `gst_` then opaque characters. Use in URLs.' },
    // Names and contact details read null once the guest's personal data has been erased.
    first_name: nullable('string'),
    last_name: nullable('string'),
    email: nullable('string'),
    phone: nullable('string'),
    status: { type: 'string', enum: ['expected', 'registered', 'checked_in', 'checked_out', 'cancelled'] },
    created_at: { type: 'string', format: 'date-time' },
    arrival_date: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: "The arrival day as given, in the facility's time zone (passes created before 1.2.0: UTC)." },
    arrival_time: nullable('string', { pattern: '^\\d{2}:\\d{2}$', description: "The arrival time as given, in the facility's time zone (passes created before 1.2.0: UTC)." }),
    facility_id: nullable('integer'),
    facility_name: nullable('string'),
    delivery: {
      type: 'object',
      additionalProperties: false,
      required: ['email', 'sms'],
      description:
        "What became of the batch's one email and one SMS: `sent` (the provider accepted it), `failed` (refused, or given up " +
        'after retries), `pending` (being tried), or null when the guest gave no such address. Optional: absent while the ' +
        'read model is being rebuilt.',
      properties: {
        email: { type: ['string', 'null'], enum: ['sent', 'failed', 'pending', null] },
        sms: { type: ['string', 'null'], enum: ['sent', 'failed', 'pending', null] },
      },
    },
  },
};

/** A pass as organization listings show it: with the inviting user. */
export const orgPassSchema: JsonSchema = {
  ...passSchema,
  required: [...(passSchema.required as string[]), 'created_by'],
  properties: {
    ...(passSchema.properties as Record<string, JsonSchema>),
    created_by: { type: 'integer', description: "Inviting user's id. Present on organization listings only." },
  },
};

export const facilitySchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'description', 'is_active', 'suspended', 'time_zone'],
  properties: {
    id: { type: 'integer', description: 'Used as `facility_id` when creating passes.' },
    name: { type: 'string' },
    description: nullable('string'),
    is_active: { type: 'boolean' },
    suspended: { type: 'boolean', description: 'A suspended facility pauses new invites.' },
    time_zone: {
      type: 'string',
      description:
        "The facility's IANA time zone (such as `Europe/Berlin`), set by an admin in the console; `UTC` when unset. Additive (1.2.0).",
      examples: ['UTC', 'Europe/Berlin'],
    },
  },
};

export function pageSchema(item: JsonSchema): JsonSchema {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['success', 'items', 'total', 'next_cursor', 'has_more'],
    properties: {
      success: { const: true },
      items: { type: 'array', items: item },
      total: nullable('integer', { minimum: 0, description: 'Null while `search` is set.' }),
      next_cursor: nullable('string', { description: 'Opaque; null on the last page.' }),
      has_more: { type: 'boolean' },
    },
  };
}

/** `{success: true, <key>: value}`, the envelope of every answer that is not a page. */
export function successEnvelopeSchema(key: string, value: unknown): JsonSchema {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['success', key],
    properties: { success: { const: true }, [key]: value },
  };
}

export const facilityListSchema: JsonSchema = successEnvelopeSchema('facilities', { type: 'array', items: facilitySchema });

export const passCreateResponseSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['success', 'id', 'public_id', 'qr_value', 'qr_values', 'quantity', 'qr_sent', 'sms_sent', 'pass_link', 'message'],
  properties: {
    success: { type: 'boolean' },
    id: { type: 'integer', description: "First guest's internal id." },
    public_id: { type: 'string', pattern: '^gst_', description: "First pass's public id." },
    qr_value: nullable('string', { description: "First pass's QR value." }),
    qr_values: { type: 'array', items: { type: 'string' }, description: 'Every issued QR value, in creation order.' },
    quantity: { type: 'integer', minimum: 1, maximum: 10 },
    qr_sent: {
      type: 'boolean',
      description: 'Pass email was delivered: its provider accepted it within DELIVERY_WAIT_MS. False when the email is still being tried; see `delivery` on the pass.',
    },
    sms_sent: { type: 'boolean', description: 'Pass SMS was delivered (accepted by the SMS provider within DELIVERY_WAIT_MS).' },
    pass_link: nullable('string', { description: 'One shareable page showing all QRs of the batch (`{base}/p/{token}`); no sign-in, treat it as a secret.' }),
    message: { type: 'string' },
  },
};

export const revokeResponseSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['success', 'public_id', 'revoked'],
  properties: { success: { type: 'boolean' }, public_id: { type: 'string' }, revoked: { type: 'boolean' } },
};

export const bearerErrorSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['error'],
  properties: { error: { type: 'string', enum: ['invalid_token', 'insufficient_scope'] } },
};

export const businessErrorSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['success', 'error', 'code'],
  properties: {
    success: { const: false },
    error: { type: 'string', description: 'Human-readable; clients branch on `code`, never on this text.' },
    code: { type: 'string', description: 'Stable machine code, for example `validation_failed`, `not_found`, `conflict`.' },
    details: { type: 'array', items: { type: 'string' }, description: 'Each validation problem, when there are several.' },
  },
};

export const quotaErrorSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['code', 'message', 'dimension', 'limit', 'current', 'requested'],
  properties: {
    code: { const: 'CAPACITY_EXCEEDED' },
    message: { type: 'string' },
    dimension: { const: 'guest_invites' },
    limit: { type: 'integer' },
    current: { type: 'integer' },
    requested: { type: 'integer' },
  },
};

export const rateLimitErrorSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['error', 'retry_after'],
  properties: { error: { const: 'temporarily_unavailable' }, retry_after: { type: 'integer', minimum: 1 } },
};

/**
 * A member of the organization directory. Every field is optional in a response: `fields`
 * selects them, and the credential's tier bounds them (`email` and `phone` need
 * org:members:contact:read, or a user token).
 */
export const memberSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    id: { type: 'string', pattern: '^emp_', description: 'Prefix `emp_` then opaque characters.' },
    name: { type: 'string', description: 'First plus last name; empty once the name was erased.' },
    first_name: { type: 'string' },
    last_name: { type: 'string' },
    job_title: nullable('string'),
    department: nullable('string', { description: 'Department display name.' }),
    status: { type: 'string', enum: ['active', 'inactive'] },
    created_at: nullable('string', { format: 'date-time' }),
    email: nullable('string', { description: 'Contact tier: needs `org:members:contact:read`. Null when none or erased.' }),
    phone: nullable('string', { description: 'Contact tier: needs `org:members:contact:read`. Null when none or erased.' }),
  },
};

export const memberResponseSchema: JsonSchema = successEnvelopeSchema('member', memberSchema);
export const memberPageSchema: JsonSchema = pageSchema(memberSchema);
