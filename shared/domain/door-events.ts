// Events of the door path (issue 4), kept apart from events.ts until the lead merges them:
// * `PassCheckedIn`: the first granted entry of an active pass moved it to `checked_in`
//   (stream: the pass's guest-invites stream, beside PassCreated/PassRevoked);
// * `DoorAccessRecorded`: one scan at a door, granted or denied, for auditors (stream: the pass's
//   stream when the scan matched a pass, else `door-access-{facilityId}-{YYYY-MM-DD}`).
//
// TO MERGE: add both types to DomainEvent, `doorAccessLog` to `streams`, and the two catalogue
// entries below to event-schemas.ts's `catalogue` (they are written in its format). Until then
// `withDoorEventSchemas` extends a schema catalogue with them (tests, and a guard in the reactor).
import { Ajv2020, type AnySchemaObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { PASS_PUBLIC_ID_PATTERN } from './pass-request.js';

export type DoorAccessResult = 'granted' | 'denied';
export type DoorDenialReason = 'unknown_credential' | 'revoked' | 'expired' | 'not_yet_valid';
export const DOOR_DENIAL_REASONS: readonly DoorDenialReason[] = ['unknown_credential', 'revoked', 'expired', 'not_yet_valid'];

export type PassCheckedIn = {
  type: 'PassCheckedIn';
  data: {
    passId: number;
    publicId: string;
    orgId: number;
    facilityId: number;
    /** The access event (scan) that checked the guest in. */
    accessId: string;
    controllerId: string;
    door: string;
    /** The scan's time on the controller, ISO 8601 UTC. */
    checkedInAt: string;
  };
};

export type DoorAccessRecorded = {
  type: 'DoorAccessRecorded';
  data: {
    /** Assigned by the controller; the same scan redelivered carries the same id. */
    accessId: string;
    facilityId: number;
    /** Known when the scan matched a pass. */
    orgId: number | null;
    controllerId: string;
    door: string;
    result: DoorAccessResult;
    /** null when granted. */
    reason: DoorDenialReason | null;
    passId: number | null;
    publicId: string | null;
    /** Controller clock. */
    scannedAt: string;
    /** Gateway clock. */
    receivedAt: string;
  };
};

export type DoorDomainEvent = PassCheckedIn | DoorAccessRecorded;
export type DoorDomainEventType = DoorDomainEvent['type'];

/** Streams to add to `streams` in events.ts. */
export const doorStreams = {
  /** Scans that matched no pass (unknown QR), per facility and UTC day. */
  doorAccessLog: (facilityId: number, day: string) => `door-access-${facilityId}-${day}`,
} as const;

// ---------------------------------------------------------------------------------------------
// JSON Schemas, in the format of event-schemas.ts's catalogue.

type PropertiesOf<D> = { readonly [K in keyof D]-?: AnySchemaObject };
type DataOf<T extends DoorDomainEventType> = Extract<DoorDomainEvent, { type: T }>['data'];

const ID = { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER };
const UUID = { type: 'string', format: 'uuid' };
const PUBLIC_ID = { type: 'string', pattern: PASS_PUBLIC_ID_PATTERN };
const CONTROLLER_ID = { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,64}$' };
const DOOR = { type: 'string', minLength: 1, maxLength: 100 };
const TIME = { type: 'string', format: 'date-time' };
const nullable = (schema: AnySchemaObject) => ({ ...schema, type: [schema.type as string, 'null'] });

export const doorEventCatalogue: { readonly [T in DoorDomainEventType]: { readonly version: number; readonly properties: PropertiesOf<DataOf<T>> } } = {
  PassCheckedIn: {
    version: 1,
    properties: {
      passId: ID,
      publicId: PUBLIC_ID,
      orgId: ID,
      facilityId: ID,
      accessId: UUID,
      controllerId: CONTROLLER_ID,
      door: DOOR,
      checkedInAt: TIME,
    },
  },
  DoorAccessRecorded: {
    version: 1,
    properties: {
      accessId: UUID,
      facilityId: ID,
      orgId: nullable(ID),
      controllerId: CONTROLLER_ID,
      door: DOOR,
      result: { type: 'string', enum: ['granted', 'denied'] },
      reason: { type: ['string', 'null'], enum: [...DOOR_DENIAL_REASONS, null] },
      passId: nullable(ID),
      publicId: nullable(PUBLIC_ID),
      scannedAt: TIME,
      receivedAt: TIME,
    },
  },
};

function objectSchema(properties: Readonly<Record<string, AnySchemaObject>>): AnySchemaObject {
  return { type: 'object', additionalProperties: false, required: Object.keys(properties), properties };
}

const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
addFormatsModule.default(ajv, ['date-time', 'uuid']);
const validators = new Map<string, ValidateFunction>(
  Object.entries(doorEventCatalogue).map(([type, entry]) => [type, ajv.compile(objectSchema(entry.properties))]),
);

export function isDoorEventType(type: string): type is DoorDomainEventType {
  return validators.has(type);
}

export function doorEventDataSchema(type: DoorDomainEventType): AnySchemaObject {
  return objectSchema(doorEventCatalogue[type].properties);
}

export interface SchemaCatalogue {
  validate(type: string, schemaVersion: number, data: unknown): void;
  upcast(type: string, schemaVersion: number, data: unknown): { schemaVersion: number; data: unknown };
  versionOf(type: string): number;
}

/** A catalogue that also knows the door events (for stores and handlers used before the merge). */
export function withDoorEventSchemas(base: SchemaCatalogue): SchemaCatalogue {
  return {
    validate(type, schemaVersion, data) {
      if (!isDoorEventType(type)) return base.validate(type, schemaVersion, data);
      if (schemaVersion !== doorEventCatalogue[type].version) throw new Error(`event type "${type}" has no schema version ${schemaVersion}`);
      const validate = validators.get(type)!;
      if (!validate(data)) {
        const problems = (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`);
        throw new Error(`invalid ${type} event data (schema version ${schemaVersion}): ${problems.join('; ')}`);
      }
    },
    upcast(type, schemaVersion, data) {
      if (!isDoorEventType(type)) return base.upcast(type, schemaVersion, data);
      if (schemaVersion !== doorEventCatalogue[type].version) throw new Error(`event type "${type}" has no schema version ${schemaVersion}`);
      return { schemaVersion, data };
    },
    versionOf(type) {
      return isDoorEventType(type) ? doorEventCatalogue[type].version : base.versionOf(type);
    },
  };
}
