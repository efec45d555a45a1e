// The event catalogue: every fact the service records. Data shapes here; JSON Schemas in
// event-schemas.ts validate them on append and on read. No secret appears in any event:
// API keys, passwords, codes and tokens are present only as hashes, and a guest's personal
// data (names, contact details, QR values) only sealed with a per-guest key (see sealed-box.ts).
import { sha256Hex } from '../oauth/opaque-credentials.js';
import type { Sealed } from './sealed.js';

export type { Sealed };

export type Role = 'admin' | 'self_invite' | 'employee_view';
export const ROLES: readonly Role[] = ['admin', 'self_invite', 'employee_view'];

export type OrgScope =
  | 'org:passes:read'
  | 'org:passes:write'
  | 'org:facilities:read'
  | 'org:members:read'
  | 'org:members:contact:read'
  | 'org:audit:read';
export const ORG_SCOPES: readonly OrgScope[] = [
  'org:passes:read',
  'org:passes:write',
  'org:facilities:read',
  'org:members:read',
  'org:members:contact:read',
  'org:audit:read',
];

export const DEFAULT_INVITE_ALLOWANCE = 50;

export type PassStatus = 'expected' | 'registered' | 'checked_in' | 'checked_out' | 'cancelled';
/** A pass can be revoked (and its QR opens doors) only in these states. */
export const ACTIVE_PASS_STATUSES: readonly PassStatus[] = ['expected', 'registered'];

/** The guest's personal data, sealed in PassCreated so it can be erased by destroying the key. */
export interface GuestDetails {
  readonly firstName: string;
  readonly lastName: string | null;
  readonly email: string | null;
  readonly phone: string | null;
  readonly country: string | null;
  readonly vehicleNumber: string | null;
  readonly notes: string | null;
  readonly invitedBy: string | null;
  /** QR value of each pass of the batch, by pass public id: bearer credentials, so sealed too. */
  readonly qrValues: Readonly<Record<string, string>>;
  /**
   * The token of the batch's pass page (`/p/{token}`), for the delivery reactor to send; the log
   * and the read models keep only its SHA-256 (PassCreated's passLinkHash). Absent from batches
   * created before the pass page existed.
   */
  readonly passLinkToken?: string;
}

/** What a guest confirmed on the pass page, sealed under the batch's key like the rest of its data. */
export interface GuestRegistration {
  /** The name as on the guest's ID. */
  readonly nameOnId: string;
  readonly vehicleNumber: string | null;
}

export type OrganizationCreated = {
  type: 'OrganizationCreated';
  data: { orgId: number; name: string; inviteAllowance: number };
};
export type OrganizationInviteAllowanceChanged = {
  type: 'OrganizationInviteAllowanceChanged';
  data: { orgId: number; inviteAllowance: number };
};

export type FacilityAdded = {
  type: 'FacilityAdded';
  data: { facilityId: number; orgId: number; name: string; description: string | null };
};
/** The facility's name, description or IANA time zone changed (all three given, as they now are). */
export type FacilityDetailsChanged = {
  type: 'FacilityDetailsChanged';
  data: { facilityId: number; orgId: number; name: string; description: string | null; timeZone: string };
};
export type FacilitySuspended = { type: 'FacilitySuspended'; data: { facilityId: number; orgId: number } };
export type FacilityResumed = { type: 'FacilityResumed'; data: { facilityId: number; orgId: number } };
export type FacilityDeactivated = { type: 'FacilityDeactivated'; data: { facilityId: number; orgId: number } };

export type UserAdded = {
  type: 'UserAdded';
  data: {
    userId: number;
    orgId: number;
    email: string;
    firstName: string;
    lastName: string;
    /** scrypt hash in PHC-like form, or null when the user signs in another way. */
    passwordHash: string | null;
    /** Per-user monthly allowance; null means the organization's default. */
    inviteAllowance: number | null;
  };
};
export type RoleGranted = { type: 'RoleGranted'; data: { userId: number; orgId: number; role: Role } };
export type RoleRevoked = { type: 'RoleRevoked'; data: { userId: number; orgId: number; role: Role } };
/**
 * A user id whose creation claimed an email address and never completed: recorded on the user's
 * stream (expected: no stream) before the address is taken over, so that creation can never land.
 */
export type UserCreationAbandoned = { type: 'UserCreationAbandoned'; data: { userId: number; orgId: number } };
export type UserInviteAllowanceChanged = {
  type: 'UserInviteAllowanceChanged';
  data: { userId: number; orgId: number; inviteAllowance: number | null };
};

/**
 * A user took an email address in an organization (stream memberEmail): the guard that keeps two
 * users of one organization from sharing one address. `claimedAt` lets a claim whose user was
 * never added (its process ended in between) be taken over later.
 */
export type MemberEmailClaimed = { type: 'MemberEmailClaimed'; data: { orgId: number; userId: number; claimedAt: string } };
/** The claim given back: adding its user failed. */
export type MemberEmailReleased = { type: 'MemberEmailReleased'; data: { orgId: number; userId: number } };

export type ApiKeyCreated = {
  type: 'ApiKeyCreated';
  data: {
    keyId: string;
    orgId: number;
    /** The admin the key acts for: passes are attributed to and counted against this user. */
    userId: number;
    /** SHA-256 of the whole key, hex. */
    keyHash: string;
    /** Distinct, non-empty. */
    scopes: OrgScope[];
    /** ISO 8601 UTC, or null for a key that never expires. */
    expiresAt: string | null;
    /** Canonical CIDRs (`address/prefix`; a single address is /32 or /128); empty = any source. */
    allowedIps: string[];
    /** 1 to 100 characters, trimmed; null for keys created before keys had names (schema version 1). */
    name: string | null;
  };
};
export type ApiKeyRevoked = { type: 'ApiKeyRevoked'; data: { keyId: string; orgId: number } };

export type PassCreated = {
  type: 'PassCreated';
  data: {
    passId: number;
    publicId: string;
    orgId: number;
    facilityId: number;
    /** The inviting user (for organization creation: the admin who created the key). */
    createdBy: number;
    /** All passes created by one request share a batch id; the batch is one guest. */
    batchId: string;
    batchSize: number;
    /** `YYYY-MM-DD`. */
    arrivalDate: string;
    /** `HH:MM` or null. */
    arrivalTime: string | null;
    /** Start and end of the pass's validity window, ISO 8601 UTC. */
    validFrom: string;
    validUntil: string;
    /** SHA-256 of the QR value, hex: what door controllers match against. */
    qrHash: string;
    /** Guest details and QR values, sealed with the batch's subject key. */
    guest: Sealed;
    /** SHA-256 (hex) of the batch's pass page token; null for batches from before the pass page (schema v1). */
    passLinkHash: string | null;
  };
};
/** The guest confirmed the visit on the pass page: an `expected` pass becomes `registered`. */
export type PassRegistered = {
  type: 'PassRegistered';
  data: {
    passId: number;
    publicId: string;
    orgId: number;
    facilityId: number;
    batchId: string;
    /** GuestRegistration, sealed with the batch's subject key. */
    registration: Sealed;
    /** The facility's visitor terms were accepted (false when the facility has none). */
    termsAccepted: boolean;
  };
};
export type PassRevoked = {
  type: 'PassRevoked';
  /** qrHash is repeated so the door link can withdraw the credential from this event alone. */
  data: { passId: number; publicId: string; orgId: number; facilityId: number; qrHash: string };
};

import type { DoorAccessRecorded, PassCheckedIn, PassCheckedOut } from './door-events.js';
import type { PassDeliveryFailed, PassDeliverySucceeded, PassMessageResendRequested } from './delivery-events.js';
import type { MemberDeactivated, MemberErased, MemberJoined, MemberProfileChanged, MemberReactivated } from './member-events.js';
export type { MemberDeactivated, MemberErased, MemberJoined, MemberProfileChanged, MemberReactivated };
import type { InvitationMailEvent } from './invitation-mail-events.js';
import type { OAuthEvent } from '../oauth/oauth-events.js';
import type { AuditTreeHeadSigned } from './audit-events.js';
export type { AuditTreeHeadSigned };
import type { RateLimitLockoutCleared } from './rate-limit-events.js';
export type { RateLimitLockoutCleared };
export type { DoorAccessRecorded, PassCheckedIn, PassCheckedOut, PassDeliveryFailed, PassDeliverySucceeded, PassMessageResendRequested, OAuthEvent };

export type DomainEvent =
  | OrganizationCreated
  | OrganizationInviteAllowanceChanged
  | FacilityAdded
  | FacilityDetailsChanged
  | FacilitySuspended
  | FacilityResumed
  | FacilityDeactivated
  | UserAdded
  | RoleGranted
  | RoleRevoked
  | UserInviteAllowanceChanged
  | UserCreationAbandoned
  | MemberEmailClaimed
  | MemberEmailReleased
  | ApiKeyCreated
  | ApiKeyRevoked
  | PassCreated
  | PassRevoked
  | PassRegistered
  | PassCheckedIn
  | PassCheckedOut
  | DoorAccessRecorded
  | PassDeliverySucceeded
  | PassDeliveryFailed
  | PassMessageResendRequested
  | MemberJoined
  | MemberProfileChanged
  | MemberDeactivated
  | MemberReactivated
  | MemberErased
  | AuditTreeHeadSigned
  | InvitationMailEvent
  | RateLimitLockoutCleared
  | OAuthEvent;

export type DomainEventType = DomainEvent['type'];

/** Stream names: one stream per consistency boundary. */
export const streams = {
  organization: (orgId: number) => `organization-${orgId}`,
  facility: (facilityId: number) => `facility-${facilityId}`,
  user: (userId: number) => `user-${userId}`,
  /** An email address within an organization, as normaliseEmail gives it (its SHA-256: no address in a stream name). */
  memberEmail: (orgId: number, email: string) => `member-email-${orgId}-${sha256Hex(email)}`,
  apiKey: (keyId: string) => `apikey-${keyId}`,
  /**
   * A user's guest invitations of one UTC calendar month: the boundary of the monthly allowance
   * and the home of those passes' lifecycle events.
   */
  guestInvites: (userId: number, month: string) => `guest-invites-${userId}-${month}`,
  /** One member of an organization's directory (member-events.ts); `memberId` is its `emp_` public id. */
  member: (memberId: string) => `member-${memberId}`,
  /** One batch's delivery outcomes (email, SMS): pass-delivery-decider.ts. */
  passDelivery: (batchId: string) => `pass-delivery-${batchId}`,
  /** Scans that matched no pass (unknown QR), per facility and UTC day. */
  doorAccessLog: (facilityId: number, day: string) => `door-access-${facilityId}-${day}`,
} as const;

/** `YYYY-MM` of a date in UTC. */
export function monthOf(date: Date): string {
  return date.toISOString().slice(0, 7);
}
