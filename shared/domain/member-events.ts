// Events of the member directory (issue 16), part of the DomainEvent union in events.ts. A member
// is one of an organization's people (every user is one; members may also exist without sign-in),
// on a stream of its own, `member-{memberId}` (streams.member). Personal data is sealed so that
// it can be erased without rewriting the log, under two subject keys of the member's
// (memberNameSubject, memberContactSubject): erasing the contact destroys one, erasing the name
// too destroys both. Job title, department and the HR system's external id are not sealed.
import type { AnySchemaObject } from 'ajv/dist/2020.js';
import type { Sealed } from './sealed.js';

/** `emp_` + 128 random bits as lowercase hex. */
export const MEMBER_ID_PATTERN = '^emp_[0-9a-f]{32}$';
export const MAX_MEMBER_NAME_LENGTH = 100;
export const MAX_MEMBER_TEXT_LENGTH = 200;

/** Sealed under the member's name key. */
export interface MemberName {
  readonly firstName: string;
  readonly lastName: string;
}

/** Sealed under the member's contact key. Email lower-cased and trimmed; phone as given, checked (7 to 15 digits). */
export interface MemberContact {
  readonly email: string | null;
  readonly phone: string | null;
}

/** The subject of a member's name key, and of its contact key. */
export const memberNameSubject = (memberId: string) => `${memberId}:name`;
export const memberContactSubject = (memberId: string) => `${memberId}:contact`;

interface MemberProfileData {
  memberId: string;
  orgId: number;
  /** MemberName, sealed. */
  name: Sealed;
  /** MemberContact, sealed; null when the member has neither an email nor a phone. */
  contact: Sealed | null;
  jobTitle: string | null;
  department: string | null;
  /** The HR system's id (import matching); null when none was given. */
  externalId: string | null;
}

export type MemberJoined = {
  type: 'MemberJoined';
  data: MemberProfileData & {
    /** The user this member is, when the person signs in; null for a member without sign-in. */
    userId: number | null;
  };
};
/** The member's whole profile as it now is (not a patch): a projection needs no earlier event to apply it. */
export type MemberProfileChanged = { type: 'MemberProfileChanged'; data: MemberProfileData };
export type MemberDeactivated = { type: 'MemberDeactivated'; data: { memberId: string; orgId: number } };
export type MemberReactivated = { type: 'MemberReactivated'; data: { memberId: string; orgId: number } };
/** The contact key was destroyed (and the name key too when `includeName`). */
export type MemberErased = { type: 'MemberErased'; data: { memberId: string; orgId: number; includeName: boolean } };

export type MemberDomainEvent = MemberJoined | MemberProfileChanged | MemberDeactivated | MemberReactivated | MemberErased;
export type MemberDomainEventType = MemberDomainEvent['type'];

type PropertiesOf<D> = { readonly [K in keyof D]-?: AnySchemaObject };
type DataOf<T extends MemberDomainEventType> = Extract<MemberDomainEvent, { type: T }>['data'];

const ID = { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER };
const MEMBER_ID = { type: 'string', pattern: MEMBER_ID_PATTERN };
const SEALED: AnySchemaObject = {
  type: 'object',
  additionalProperties: false,
  required: ['keyId', 'iv', 'ciphertext', 'tag'],
  properties: {
    keyId: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' },
    iv: { type: 'string', pattern: '^[A-Za-z0-9_-]{16}$' },
    ciphertext: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,8192}$' },
    tag: { type: 'string', pattern: '^[A-Za-z0-9_-]{22}$' },
  },
};
const TEXT = { type: ['string', 'null'], minLength: 1, maxLength: MAX_MEMBER_TEXT_LENGTH };
const profile = {
  memberId: MEMBER_ID,
  orgId: ID,
  name: SEALED,
  contact: { oneOf: [SEALED, { type: 'null' }] },
  jobTitle: TEXT,
  department: TEXT,
  externalId: TEXT,
};

export const memberEventCatalogue: {
  readonly [T in MemberDomainEventType]: { readonly version: number; readonly properties: PropertiesOf<DataOf<T>> };
} = {
  MemberJoined: { version: 1, properties: { ...profile, userId: { type: ['integer', 'null'], minimum: 1, maximum: Number.MAX_SAFE_INTEGER } } },
  MemberProfileChanged: { version: 1, properties: profile },
  MemberDeactivated: { version: 1, properties: { memberId: MEMBER_ID, orgId: ID } },
  MemberReactivated: { version: 1, properties: { memberId: MEMBER_ID, orgId: ID } },
  MemberErased: { version: 1, properties: { memberId: MEMBER_ID, orgId: ID, includeName: { type: 'boolean' } } },
};
