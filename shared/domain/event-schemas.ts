// JSON Schemas of every event type's data, compiled once. The event store validates on append
// (new events are written at the current version) and on read (an old event is checked against
// the schema it was written with, then upcast step by step to the current version).
//
// Changing an event's shape: bump `version`, move the old schema into `previous[oldVersion]`,
// add `upcasters[oldVersion]` turning old data into the new shape, and write a test. Events in
// the log are never rewritten.
import { doorEventCatalogue } from './door-events.js';
import { deliveryEventCatalogue } from './delivery-events.js';
import { memberEventCatalogue } from './member-events.js';
import { invitationMailEventCatalogue } from './invitation-mail-events.js';
import { auditEventCatalogue } from './audit-events.js';
import { rateLimitEventCatalogue } from './rate-limit-events.js';
import { OAUTH_EVENT_SCHEMAS, type OAuthEventType } from '../oauth/oauth-events.js';
import { Ajv2020, type AnySchemaObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { ORG_SCOPES, ROLES, type DomainEvent, type DomainEventType, type Sealed } from './events.js';
import { MAX_INVITE_ALLOWANCE, MAX_ORGANIZATION_NAME_LENGTH } from './organization-decider.js';
import { MAX_FACILITY_DESCRIPTION_LENGTH, MAX_FACILITY_NAME_LENGTH } from './facility-decider.js';
import { MAX_TIME_ZONE_LENGTH } from './time-zone.js';
import { MAX_EMAIL_LENGTH, MAX_USER_NAME_LENGTH } from './user-decider.js';
import { MAX_ALLOWED_IPS, MAX_API_KEY_NAME_LENGTH } from './api-key-decider.js';
import { MAX_PASSES_PER_BATCH, PASS_PUBLIC_ID_PATTERN } from './pass-constants.js';
import { PASSWORD_HASH_PATTERN } from '../crypto/password-hash.js';

/** The OAuth and sign-in events bring complete schemas of their own (shared/oauth/oauth-events.ts). */
type CoreEventType = Exclude<DomainEventType, OAuthEventType>;
type DataOf<T extends CoreEventType> = Extract<DomainEvent, { type: T }>['data'];
export type Upcaster = (data: unknown) => unknown;

/**
 * One schema per data field. Typed against events.ts: a field added there without a schema here,
 * or a schema for a field that does not exist, fails to compile. Every field is required (events
 * spell out null rather than omit) and no other field is allowed.
 */
type PropertiesOf<D> = { readonly [K in keyof D]-?: AnySchemaObject };

interface EventTypeSchemas<T extends CoreEventType> {
  /** The version new events are written with. */
  readonly version: number;
  readonly properties: PropertiesOf<DataOf<T>>;
  /** Complete data schemas of older versions still present in the log, by version. */
  readonly previous?: Readonly<Record<number, AnySchemaObject>>;
  /** `upcasters[n]` turns data of version n into data of version n + 1. */
  readonly upcasters?: Readonly<Record<number, Upcaster>>;
}

function objectSchema(properties: Readonly<Record<string, AnySchemaObject>>): AnySchemaObject {
  return { type: 'object', additionalProperties: false, required: Object.keys(properties), properties };
}

const SHA256_HEX = '^[0-9a-f]{64}$';
const BASE64URL = '^[A-Za-z0-9_-]+$';
const ID = { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER };
const KEY_ID = { type: 'string', minLength: 1, maxLength: 64, pattern: BASE64URL };
const text = (maxLength: number) => ({ type: 'string', minLength: 1, maxLength });
const nullable = (schema: AnySchemaObject) => ({ ...schema, type: [schema.type as string, 'null'] });
const ALLOWANCE = { type: 'integer', minimum: 0, maximum: MAX_INVITE_ALLOWANCE };
const SHA256 = { type: 'string', pattern: SHA256_HEX };
const PUBLIC_ID = { type: 'string', pattern: PASS_PUBLIC_ID_PATTERN };

// Lengths as pattern bounds: the characters are ASCII, so counting them is the regex's scan
// itself, where maxLength would walk a long ciphertext again counting code points.
const sealedSchema = objectSchema({
  keyId: KEY_ID,
  iv: { type: 'string', pattern: '^[A-Za-z0-9_-]{16}$' }, // 12 bytes
  ciphertext: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,65536}$' },
  tag: { type: 'string', pattern: '^[A-Za-z0-9_-]{22}$' }, // 16 bytes
} satisfies PropertiesOf<Sealed>);

/** PassCreated's fields as of version 1 (version 2 adds passLinkHash). */
const PASS_CREATED_V1_PROPERTIES = {
  passId: ID,
  publicId: PUBLIC_ID,
  orgId: ID,
  facilityId: ID,
  createdBy: ID,
  batchId: { type: 'string', format: 'uuid' },
  batchSize: { type: 'integer', minimum: 1, maximum: MAX_PASSES_PER_BATCH },
  arrivalDate: { type: 'string', format: 'date', pattern: '^\\d{4}-\\d{2}-\\d{2}$' },
  arrivalTime: nullable({ type: 'string', pattern: '^([01]\\d|2[0-3]):[0-5]\\d$' }),
  validFrom: { type: 'string', format: 'date-time' },
  validUntil: { type: 'string', format: 'date-time' },
  qrHash: SHA256,
  // Names, contact details and QR values only sealed: erasable by destroying the key.
  guest: sealedSchema,
};

/** ApiKeyCreated's fields as of version 1 (version 2 adds name). */
const API_KEY_CREATED_V1_PROPERTIES = {
  keyId: KEY_ID,
  orgId: ID,
  userId: ID,
  // Only the hash: the key itself never enters the log.
  keyHash: SHA256,
  scopes: { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', enum: [...ORG_SCOPES] } },
  expiresAt: nullable({ type: 'string', format: 'date-time' }),
  allowedIps: {
    type: 'array',
    maxItems: MAX_ALLOWED_IPS,
    uniqueItems: true,
    items: { type: 'string', minLength: 3, maxLength: 43, pattern: '^[0-9a-f.:]+/\\d{1,3}$' },
  },
};

const facilityRef = { facilityId: ID, orgId: ID };
const roleChange = { userId: ID, orgId: ID, role: { type: 'string', enum: [...ROLES] } };

const coreCatalogue: { readonly [T in CoreEventType]: EventTypeSchemas<T> } = {
  OrganizationCreated: {
    version: 1,
    properties: { orgId: ID, name: text(MAX_ORGANIZATION_NAME_LENGTH), inviteAllowance: ALLOWANCE },
  },
  OrganizationInviteAllowanceChanged: { version: 1, properties: { orgId: ID, inviteAllowance: ALLOWANCE } },
  FacilityAdded: {
    version: 1,
    properties: {
      facilityId: ID,
      orgId: ID,
      name: text(MAX_FACILITY_NAME_LENGTH),
      description: nullable(text(MAX_FACILITY_DESCRIPTION_LENGTH)),
    },
  },
  FacilityDetailsChanged: {
    version: 1,
    properties: {
      facilityId: ID,
      orgId: ID,
      name: text(MAX_FACILITY_NAME_LENGTH),
      description: nullable(text(MAX_FACILITY_DESCRIPTION_LENGTH)),
      timeZone: { type: 'string', minLength: 1, maxLength: MAX_TIME_ZONE_LENGTH, pattern: '^[A-Za-z0-9_+\\-/]+$' },
    },
  },
  FacilitySuspended: { version: 1, properties: facilityRef },
  FacilityResumed: { version: 1, properties: facilityRef },
  FacilityDeactivated: { version: 1, properties: facilityRef },
  UserAdded: {
    version: 1,
    properties: {
      userId: ID,
      orgId: ID,
      email: { type: 'string', minLength: 3, maxLength: MAX_EMAIL_LENGTH, pattern: '^[^\\s@]+@[^\\s@]+$' },
      firstName: text(MAX_USER_NAME_LENGTH),
      lastName: text(MAX_USER_NAME_LENGTH),
      // The pattern admits only a scrypt hash: a password in clear can never be appended.
      passwordHash: nullable({ type: 'string', maxLength: 512, pattern: PASSWORD_HASH_PATTERN }),
      inviteAllowance: nullable(ALLOWANCE),
    },
  },
  RoleGranted: { version: 1, properties: roleChange },
  RoleRevoked: { version: 1, properties: roleChange },
  UserInviteAllowanceChanged: {
    version: 1,
    properties: { userId: ID, orgId: ID, inviteAllowance: nullable(ALLOWANCE) },
  },
  UserCreationAbandoned: { version: 1, properties: { userId: ID, orgId: ID } },
  MemberEmailClaimed: { version: 1, properties: { orgId: ID, userId: ID, claimedAt: { type: 'string', format: 'date-time' } } },
  MemberEmailReleased: { version: 1, properties: { orgId: ID, userId: ID } },
  ApiKeyCreated: {
    version: 2,
    properties: { ...API_KEY_CREATED_V1_PROPERTIES, name: nullable(text(MAX_API_KEY_NAME_LENGTH)) },
    // Version 1 had no name: its keys list as unnamed.
    previous: { 1: objectSchema(API_KEY_CREATED_V1_PROPERTIES) },
    upcasters: { 1: (data) => ({ ...(data as object), name: null }) },
  },
  ApiKeyRevoked: { version: 1, properties: { keyId: KEY_ID, orgId: ID } },
  PassCreated: {
    version: 2,
    properties: {
      ...PASS_CREATED_V1_PROPERTIES,
      passLinkHash: nullable(SHA256),
    },
    // Version 1 had no pass page: its batches have no link.
    previous: { 1: objectSchema(PASS_CREATED_V1_PROPERTIES) },
    upcasters: { 1: (data) => ({ ...(data as object), passLinkHash: null }) },
  },
  PassRegistered: {
    version: 1,
    properties: {
      passId: ID,
      publicId: PUBLIC_ID,
      orgId: ID,
      facilityId: ID,
      batchId: { type: 'string', format: 'uuid' },
      registration: sealedSchema,
      termsAccepted: { type: 'boolean' },
    },
  },
  PassRevoked: {
    version: 1,
    properties: { passId: ID, publicId: PUBLIC_ID, orgId: ID, facilityId: ID, qrHash: SHA256 },
  },
  ...doorEventCatalogue,
  ...deliveryEventCatalogue,
  ...memberEventCatalogue,
  ...invitationMailEventCatalogue,
  ...auditEventCatalogue,
  ...rateLimitEventCatalogue,
};

/** Every event type with its current data schema, older schemas and upcasters. */
interface CatalogueEntry {
  readonly version: number;
  readonly schema: AnySchemaObject;
  readonly previous?: Readonly<Record<number, AnySchemaObject>>;
  readonly upcasters?: Readonly<Record<number, Upcaster>>;
}

const catalogue: Readonly<Record<DomainEventType, CatalogueEntry>> = {
  ...(Object.fromEntries(
    Object.entries(coreCatalogue).map(([type, entry]) => {
      const { properties, ...rest } = entry as EventTypeSchemas<CoreEventType>;
      return [type, { ...rest, schema: objectSchema(properties) }];
    }),
  ) as Record<CoreEventType, CatalogueEntry>),
  ...(Object.fromEntries(
    Object.entries(OAUTH_EVENT_SCHEMAS).map(([type, entry]) => [type, { version: entry.version, schema: entry.schema as AnySchemaObject }]),
  ) as Record<OAuthEventType, CatalogueEntry>),
};

const addFormats = addFormatsModule.default;
const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
addFormats(ajv, ['date', 'date-time', 'uuid']);

/** validators.get(type)[version] */
const validators = new Map<string, ReadonlyMap<number, ValidateFunction>>();
for (const [type, entry] of Object.entries(catalogue)) {
  const byVersion = new Map<number, ValidateFunction>();
  for (const [version, schema] of Object.entries(entry.previous ?? {})) byVersion.set(Number(version), ajv.compile(schema));
  byVersion.set(entry.version, ajv.compile(entry.schema));
  validators.set(type, byVersion);
}

/** Every event type the service records. */
export const EVENT_TYPES = Object.keys(catalogue) as DomainEventType[];

function entryOf(type: string): CatalogueEntry {
  if (!Object.hasOwn(catalogue, type)) throw new Error(`unknown event type "${type}"`);
  return catalogue[type as DomainEventType];
}

/** The schema version new events of this type are written with. Throws for an unknown type. */
export function schemaVersionOf(type: string): number {
  return entryOf(type).version;
}

/** Throws an Error naming the type, the version and every ajv complaint when `data` does not fit. */
export function validateEvent(type: string, schemaVersion: number, data: unknown): void {
  entryOf(type);
  const validate = validators.get(type)?.get(schemaVersion);
  if (!validate) throw new Error(`event type "${type}" has no schema version ${schemaVersion}`);
  if (!validate(data)) {
    const problems = (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`);
    throw new Error(`invalid ${type} event data (schema version ${schemaVersion}): ${problems.join('; ')}`);
  }
}

/**
 * Applies `upcasters[from]`, `upcasters[from + 1]`, ... until `to`. Exported for tests of the
 * mechanism; callers use `upcast`.
 */
export function applyUpcasters(
  type: string,
  upcasters: Readonly<Record<number, Upcaster>>,
  from: number,
  to: number,
  data: unknown,
): unknown {
  let current = data;
  for (let version = from; version < to; version++) {
    const step = upcasters[version];
    if (!step) throw new Error(`event type "${type}" has no upcaster from schema version ${version}`);
    current = step(current);
  }
  return current;
}

/** Brings data written at `schemaVersion` up to the current version, one step at a time. */
export function upcast(type: string, schemaVersion: number, data: unknown): { schemaVersion: number; data: unknown } {
  const entry = entryOf(type);
  if (!Number.isInteger(schemaVersion) || schemaVersion < 1) {
    throw new Error(`event type "${type}": invalid schema version ${schemaVersion}`);
  }
  if (schemaVersion > entry.version) {
    // Written by newer code than this process runs: refusing beats misreading it.
    throw new Error(`event type "${type}" schema version ${schemaVersion} is newer than this build knows (${entry.version})`);
  }
  return { schemaVersion: entry.version, data: applyUpcasters(type, entry.upcasters ?? {}, schemaVersion, entry.version, data) };
}

/** ajv's complaints about an event's data at its type's current version; empty when it is valid. */
export function eventDataErrors(event: { readonly type: string; readonly data: unknown }): string[] {
  try {
    validateEvent(event.type, schemaVersionOf(event.type), event.data);
    return [];
  } catch (error) {
    return [error instanceof Error ? error.message : String(error)];
  }
}

/** What the validating event store uses. */
export const eventSchemas = { validate: validateEvent, upcast, versionOf: schemaVersionOf } as const;

/** The current data schema of each type, for documentation and tests. */
export function eventDataSchema(type: DomainEventType): AnySchemaObject {
  return catalogue[type].schema;
}
