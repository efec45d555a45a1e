// Valid sample data for every event type, built the way the use cases build them.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { DomainEvent, DomainEventType, GuestDetails, PassCreated } from '../../shared/domain/events.js';
import { seal } from '../../shared/crypto/sealed-box.js';
import type { OAuthEventType } from '../../shared/oauth/oauth-events.js';
import { OAUTH_SAMPLES } from '../oauth/oauth-fixtures.js';

export const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

export function guestDetails(overrides: Partial<GuestDetails> = {}): GuestDetails {
  return {
    firstName: 'Ada',
    lastName: 'Lovelace',
    email: 'ada@example.com',
    phone: null,
    country: null,
    vehicleNumber: null,
    notes: null,
    invitedBy: null,
    qrValues: {},
    ...overrides,
  };
}

const sampleKey = { keyId: randomUUID(), key: randomBytes(32) };

export function publicId(n: number): string {
  return `gst_${n.toString(16).padStart(32, '0')}`;
}

// Sealing draws a random IV: seal each sample once so the same pass compares equal.
const sealedGuests = new Map<number, PassCreated['data']['guest']>();
function sealedGuest(n: number, qr: string): PassCreated['data']['guest'] {
  let sealed = sealedGuests.get(n);
  if (!sealed) sealedGuests.set(n, (sealed = seal(sampleKey, guestDetails({ qrValues: { [publicId(n)]: qr } }))));
  return sealed;
}

export function passData(n: number, overrides: Partial<PassCreated['data']> = {}): PassCreated['data'] {
  const qr = `qr-${n}`;
  return {
    passId: n,
    publicId: publicId(n),
    orgId: 1,
    facilityId: 10,
    createdBy: 100,
    batchId: '6f1c8a9e-2b7d-4c1e-9f3a-5d8e7b6a4c21',
    batchSize: 1,
    arrivalDate: '2026-03-01',
    arrivalTime: null,
    validFrom: '2026-03-01T00:00:00.000Z',
    validUntil: '2026-03-01T23:59:59.999Z',
    qrHash: sha256(qr),
    guest: sealedGuest(n, qr),
    passLinkHash: null,
    ...overrides,
  };
}

export const samplePasswordHash =
  '$scrypt$ln=15,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g';

/** One valid event of every type. */
export const sampleEvents: { readonly [T in DomainEventType]: Extract<DomainEvent, { type: T }> } = {
  OrganizationCreated: { type: 'OrganizationCreated', data: { orgId: 1, name: 'Acme', inviteAllowance: 50 } },
  OrganizationInviteAllowanceChanged: { type: 'OrganizationInviteAllowanceChanged', data: { orgId: 1, inviteAllowance: 20 } },
  FacilityAdded: { type: 'FacilityAdded', data: { facilityId: 10, orgId: 1, name: 'HQ', description: null } },
  FacilityDetailsChanged: { type: 'FacilityDetailsChanged', data: { facilityId: 10, orgId: 1, name: 'HQ', description: 'Front door', timeZone: 'Europe/Berlin' } },
  FacilitySuspended: { type: 'FacilitySuspended', data: { facilityId: 10, orgId: 1 } },
  InvitationLinkIssued: { type: 'InvitationLinkIssued', data: { inviteId: 5, orgId: 1, linkHash: 'a'.repeat(64) } },
  InvitationEmailSent: { type: 'InvitationEmailSent', data: { inviteId: 5, orgId: 1, providerMessageId: null } },
  InvitationEmailFailed: { type: 'InvitationEmailFailed', data: { inviteId: 5, orgId: 1, errorClass: 'provider_unavailable', final: false } },
  FacilityResumed: { type: 'FacilityResumed', data: { facilityId: 10, orgId: 1 } },
  FacilityDeactivated: { type: 'FacilityDeactivated', data: { facilityId: 10, orgId: 1 } },
  UserAdded: {
    type: 'UserAdded',
    data: {
      userId: 100,
      orgId: 1,
      email: 'admin@example.com',
      firstName: 'Grace',
      lastName: 'Hopper',
      passwordHash: samplePasswordHash,
      inviteAllowance: null,
    },
  },
  RoleGranted: { type: 'RoleGranted', data: { userId: 100, orgId: 1, role: 'admin' } },
  RoleRevoked: { type: 'RoleRevoked', data: { userId: 100, orgId: 1, role: 'self_invite' } },
  UserInviteAllowanceChanged: { type: 'UserInviteAllowanceChanged', data: { userId: 100, orgId: 1, inviteAllowance: 5 } },
  UserCreationAbandoned: { type: 'UserCreationAbandoned', data: { userId: 100, orgId: 1 } },
  MemberEmailClaimed: { type: 'MemberEmailClaimed', data: { orgId: 1, userId: 100, claimedAt: '2026-03-02T09:00:00.000Z' } },
  MemberEmailReleased: { type: 'MemberEmailReleased', data: { orgId: 1, userId: 100 } },
  ApiKeyCreated: {
    type: 'ApiKeyCreated',
    data: {
      keyId: 'key_0123456789abcdef01234567',
      orgId: 1,
      userId: 100,
      keyHash: sha256('svc_sk_example'),
      scopes: ['org:passes:read', 'org:passes:write'],
      expiresAt: '2027-01-01T00:00:00.000Z',
      allowedIps: ['10.0.0.0/8', '2001:db8::/32'],
      name: 'Reception kiosk',
    },
  },
  ApiKeyRevoked: { type: 'ApiKeyRevoked', data: { keyId: 'key_0123456789abcdef01234567', orgId: 1 } },
  PassCreated: { type: 'PassCreated', data: passData(1) },
  PassRevoked: {
    type: 'PassRevoked',
    data: { passId: 1, publicId: publicId(1), orgId: 1, facilityId: 10, qrHash: sha256('qr-1') },
  },
  PassCheckedIn: {
    type: 'PassCheckedIn',
    data: {
      passId: 1,
      publicId: publicId(1),
      orgId: 1,
      facilityId: 10,
      accessId: '0b9c7a52-8c0e-4f57-9d0b-51b0c3e2f1a4',
      controllerId: 'ctrl-1',
      door: 'main',
      checkedInAt: '2026-12-01T09:00:00.000Z',
    },
  },
  MemberJoined: {
    type: 'MemberJoined',
    data: {
      memberId: 'emp_0123456789abcdef0123456789abcdef',
      orgId: 1,
      userId: 100,
      name: sealedGuest(2, 'qr-2'),
      contact: sealedGuest(3, 'qr-3'),
      jobTitle: 'Engineer',
      department: 'Research',
      externalId: 'HR-0042',
    },
  },
  MemberProfileChanged: {
    type: 'MemberProfileChanged',
    data: {
      memberId: 'emp_0123456789abcdef0123456789abcdef',
      orgId: 1,
      name: sealedGuest(2, 'qr-2'),
      contact: null,
      jobTitle: null,
      department: null,
      externalId: null,
    },
  },
  MemberDeactivated: { type: 'MemberDeactivated', data: { memberId: 'emp_0123456789abcdef0123456789abcdef', orgId: 1 } },
  MemberReactivated: { type: 'MemberReactivated', data: { memberId: 'emp_0123456789abcdef0123456789abcdef', orgId: 1 } },
  MemberErased: { type: 'MemberErased', data: { memberId: 'emp_0123456789abcdef0123456789abcdef', orgId: 1, includeName: false } },
  AuditTreeHeadSigned: {
    type: 'AuditTreeHeadSigned',
    data: { head: 1, treeSize: 12, rootHash: 'ab'.repeat(32), timestamp: 1767225600000, kid: 'k1', signature: 'eyJhbGciOiJFZERTQSJ9.eyJ0cmVlX3NpemUiOjEyfQ.c2ln' },
  },
  RateLimitLockoutCleared: { type: 'RateLimitLockoutCleared', data: { policy: 'oauth-introspect', keySha256: 'ab'.repeat(32), level: 1, clearedBy: 'ops' } },
  PassRegistered: {
    type: 'PassRegistered',
    data: {
      passId: 1,
      publicId: publicId(1),
      orgId: 1,
      facilityId: 10,
      batchId: '6f1c8a9e-2b7d-4c1e-9f3a-5d8e7b6a4c21',
      registration: sealedGuest(1, 'qr-1'),
      termsAccepted: false,
    },
  },
  PassCheckedOut: {
    type: 'PassCheckedOut',
    data: {
      passId: 1,
      publicId: publicId(1),
      orgId: 1,
      facilityId: 10,
      accessId: '1c9d7a52-8c0e-4f57-9d0b-51b0c3e2f1a4',
      controllerId: 'ctrl-2',
      door: 'exit',
      checkedOutAt: '2026-12-01T17:00:00.000Z',
    },
  },
  PassDeliverySucceeded: {
    type: 'PassDeliverySucceeded',
    data: {
      batchId: '6f1c8a9e-2b7d-4c1e-9f3a-5d8e7b6a4c21',
      orgId: 1,
      channel: 'email',
      attempt: 1,
      messageId: '<pass-6f1c8a9e-2b7d-4c1e-9f3a-5d8e7b6a4c21@guestpass.invalid>',
      providerMessageId: '250 OK queued',
    },
  },
  PassDeliveryFailed: {
    type: 'PassDeliveryFailed',
    data: {
      batchId: '6f1c8a9e-2b7d-4c1e-9f3a-5d8e7b6a4c21',
      orgId: 1,
      channel: 'sms',
      attempt: 2,
      errorClass: 'provider_unavailable',
      final: false,
    },
  },
  PassMessageResendRequested: {
    type: 'PassMessageResendRequested',
    data: { batchId: '6f1c8a9e-2b7d-4c1e-9f3a-5d8e7b6a4c21', orgId: 1, requestedBy: 7, requestedAt: '2026-12-01T09:00:00.000Z' },
  },
  DoorAccessRecorded: {
    type: 'DoorAccessRecorded',
    data: {
      accessId: '0b9c7a52-8c0e-4f57-9d0b-51b0c3e2f1a4',
      facilityId: 10,
      orgId: 1,
      controllerId: 'ctrl-1',
      door: 'main',
      direction: 'entry',
      result: 'granted',
      reason: null,
      passId: 1,
      publicId: publicId(1),
      scannedAt: '2026-12-01T09:00:00.000Z',
      receivedAt: '2026-12-01T09:00:00.050Z',
    },
  },
  ...(Object.fromEntries(OAUTH_SAMPLES.map((e) => [e.type, e])) as { [T in OAuthEventType]: Extract<DomainEvent, { type: T }> }),
};
