// Events of the door path (issue 4), part of the DomainEvent union in events.ts:
// * `PassCheckedIn`: the first granted entry of an active pass moved it to `checked_in`
//   (stream: the pass's guest-invites stream, beside PassCreated/PassRevoked);
// * `PassCheckedOut`: a granted scan at an exit reader of a checked-in pass moved it to
//   `checked_out` (same stream); the door-gateway then withdraws its credential from the doors;
// * `DoorAccessRecorded`: one scan at a door, granted or denied, entry or exit, for auditors
//   (stream: the pass's stream when the scan matched a pass, else
//   `streams.doorAccessLog(facilityId, day)`).
// Also their JSON Schemas (`doorEventCatalogue`), spread into event-schemas.ts's `catalogue`,
// with the schemas of older versions and their upcasters.
import type { AnySchemaObject } from 'ajv/dist/2020.js';
import { PASS_PUBLIC_ID_PATTERN } from './pass-constants.js';

export type DoorAccessResult = 'granted' | 'denied';
export type DoorDenialReason = 'unknown_credential' | 'revoked' | 'expired' | 'not_yet_valid';
export const DOOR_DENIAL_REASONS: readonly DoorDenialReason[] = ['unknown_credential', 'revoked', 'expired', 'not_yet_valid'];
/** Which way the reader that scanned faces: `exit` readers check a guest out. */
export type DoorAccessDirection = 'entry' | 'exit';
export const DOOR_ACCESS_DIRECTIONS: readonly DoorAccessDirection[] = ['entry', 'exit'];

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

/** An exit reader's granted scan of a checked-in pass: the guest left, and the pass opens no entry door again. */
export type PassCheckedOut = {
  type: 'PassCheckedOut';
  data: {
    passId: number;
    publicId: string;
    orgId: number;
    facilityId: number;
    /** The access event (scan at an exit reader) that checked the guest out. */
    accessId: string;
    controllerId: string;
    door: string;
    /** The scan's time on the controller, ISO 8601 UTC. */
    checkedOutAt: string;
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
    /** The reader's direction as the controller reported it (`entry` when it did not say; schema v1 had none). */
    direction: DoorAccessDirection;
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

export type DoorDomainEvent = PassCheckedIn | PassCheckedOut | DoorAccessRecorded;
export type DoorDomainEventType = DoorDomainEvent['type'];

// ---------------------------------------------------------------------------------------------
// JSON Schemas, entries of event-schemas.ts's catalogue (validated and versioned there).

type PropertiesOf<D> = { readonly [K in keyof D]-?: AnySchemaObject };
type DataOf<T extends DoorDomainEventType> = Extract<DoorDomainEvent, { type: T }>['data'];

/** As event-schemas.ts's entries: `upcasters[n]` turns data of version n into data of version n + 1. */
interface DoorEventSchemas<T extends DoorDomainEventType> {
  readonly version: number;
  readonly properties: PropertiesOf<DataOf<T>>;
  /** Complete data schemas of older versions still present in the log, by version. */
  readonly previous?: Readonly<Record<number, AnySchemaObject>>;
  readonly upcasters?: Readonly<Record<number, (data: unknown) => unknown>>;
}

const ID = { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER };
const UUID = { type: 'string', format: 'uuid' };
const PUBLIC_ID = { type: 'string', pattern: PASS_PUBLIC_ID_PATTERN };
const CONTROLLER_ID = { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,64}$' };
const DOOR = { type: 'string', minLength: 1, maxLength: 100 };
const TIME = { type: 'string', format: 'date-time' };
const nullable = (schema: AnySchemaObject) => ({ ...schema, type: [schema.type as string, 'null'] });

/** DoorAccessRecorded v1: every scan was an entry before exit readers existed. */
const DOOR_ACCESS_RECORDED_V1 = {
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
} satisfies Omit<PropertiesOf<DataOf<'DoorAccessRecorded'>>, 'direction'>;

export const doorEventCatalogue: { readonly [T in DoorDomainEventType]: DoorEventSchemas<T> } = {
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
  PassCheckedOut: {
    version: 1,
    properties: {
      passId: ID,
      publicId: PUBLIC_ID,
      orgId: ID,
      facilityId: ID,
      accessId: UUID,
      controllerId: CONTROLLER_ID,
      door: DOOR,
      checkedOutAt: TIME,
    },
  },
  DoorAccessRecorded: {
    // 2: the reader's direction (exit readers check guests out).
    version: 2,
    properties: { ...DOOR_ACCESS_RECORDED_V1, direction: { type: 'string', enum: [...DOOR_ACCESS_DIRECTIONS] } },
    previous: {
      1: { type: 'object', additionalProperties: false, required: Object.keys(DOOR_ACCESS_RECORDED_V1), properties: DOOR_ACCESS_RECORDED_V1 },
    },
    upcasters: { 1: (data) => ({ ...(data as object), direction: 'entry' }) },
  },
};
