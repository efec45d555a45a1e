import { expect } from 'chai';
import {
  applyUpcasters,
  EVENT_TYPES,
  eventSchemas,
  schemaVersionOf,
  upcast,
  validateEvent,
} from '../../shared/domain/event-schemas.js';
import type { DomainEventType } from '../../shared/domain/events.js';
import { passData, sampleEvents } from '../support/domain-fixtures.js';

/** For each type, a change that must be refused beyond an extra field. */
const breakages: { readonly [T in DomainEventType]: (data: Record<string, unknown>) => void } = {
  OrganizationCreated: (d) => void (d.inviteAllowance = -1),
  OrganizationInviteAllowanceChanged: (d) => void (d.inviteAllowance = '10'),
  FacilityAdded: (d) => void (d.name = ''),
  FacilityDetailsChanged: (d) => void (d.timeZone = 'Europe/Berlin; DROP'),
  FacilitySuspended: (d) => void delete d.orgId,
  InvitationLinkIssued: (d) => void (d.linkHash = 'the-token-itself'),
  InvitationEmailSent: (d) => void (d.inviteId = 0),
  InvitationEmailFailed: (d) => void (d.errorClass = 'guest_erased'),
  FacilityResumed: (d) => void (d.facilityId = 0),
  FacilityDeactivated: (d) => void (d.facilityId = 1.5),
  UserAdded: (d) => void (d.passwordHash = 'correct horse battery staple'),
  RoleGranted: (d) => void (d.role = 'owner'),
  RoleRevoked: (d) => void delete d.role,
  UserInviteAllowanceChanged: (d) => void (d.inviteAllowance = 2.5),
  UserCreationAbandoned: (d) => void delete d.orgId,
  MemberEmailClaimed: (d) => void (d.claimedAt = 'yesterday'),
  MemberEmailReleased: (d) => void (d.userId = -1),
  ApiKeyCreated: (d) => void (d.keyHash = 'svc_sk_the-key-itself'),
  ApiKeyRevoked: (d) => void (d.keyId = 'has space'),
  PassCreated: (d) => void (d.arrivalDate = '2026-02-30'),
  PassRevoked: (d) => void (d.publicId = 'pass_1'),
  PassCheckedIn: (d) => void (d.accessId = 'not-a-uuid'),
  PassRegistered: (d) => void (d.termsAccepted = 'yes'),
  MemberJoined: (d) => void (d.memberId = 'gst_0123456789abcdef0123456789abcdef'),
  MemberProfileChanged: (d) => void (d.name = { firstName: 'Ada', lastName: 'Lovelace' }),
  MemberDeactivated: (d) => void (d.orgId = 0),
  MemberReactivated: (d) => void delete d.memberId,
  MemberErased: (d) => void (d.includeName = 'yes'),
  AuditTreeHeadSigned: (d) => void (d.rootHash = 'not a hash'),
  RateLimitLockoutCleared: (d) => void (d.keySha256 = '203.0.113.7'),
  PassCheckedOut: (d) => void (d.checkedOutAt = 'later'),
  PassDeliverySucceeded: (d) => void (d.channel = 'fax'),
  PassDeliveryFailed: (d) => void (d.errorClass = 'SMTP 550 user unknown: ada@example.com'),
  PassMessageResendRequested: (d) => void (d.requestedAt = 'ten minutes ago'),
  DoorAccessRecorded: (d) => void (d.result = 'maybe'),
  OAuthClientRegistered: (d) => void (d.clientType = 'native'),
  OAuthClientDeleted: (d) => void (d.clientId = 'svc_short'),
  AuthorizationCodeIssued: (d) => void (d.amr = []),
  AuthorizationCodeRedeemed: (d) => void (d.codeHash = 'the-code-itself'),
  AuthorizationCodeReplayed: (d) => void (d.familyId = 'FAMILY'),
  TokenFamilyStarted: (d) => void (d.refreshTokenHash = 'the-refresh-token-itself'),
  RefreshTokenRotated: (d) => void (d.newTokenHash = 'the-new-token-itself'),
  TokenFamilyRevoked: (d) => void (d.reason = 'because'),
  SignInSessionStarted: (d) => void (d.sessionHash = 'the-cookie-itself'),
  SignInSessionEnded: (d) => void (d.reason = 'timeout'),
  OAuthConsentGranted: (d) => void (d.scopes = ['admin']),
  TotpEnrolled: (d) => void (d.secret = 'JBSWY3DPEHPK3PXP'),
  RecoveryCodesIssued: (d) => void (d.codeHashes = ['abcd-efgh']),
  RecoveryCodeUsed: (d) => void (d.codeHash = 'abcd-efgh'),
  TotpCodeAccepted: (d) => void (d.timeStep = -1),
  PasskeyRegistered: (d) => void (d.counter = -1),
  PasskeyUsed: (d) => void (d.credentialId = 'not base64url!'),
  PasskeyRemoved: (d) => void delete d.credentialId,
  FederatedIdentityLinked: (d) => void (d.issuer = 'ftp://upstream'),
  InvitationCreated: (d) => void (d.role = 'owner'),
  InvitationAccepted: (d) => void (d.role = 'owner'),
  InvitationDeclined: (d) => void delete d.userId,
  InvitationCancelled: (d) => void (d.inviteId = 0),
  OAuthClientSecretRotated: (d) => void (d.secretHash = 'the-secret-itself'),
};

const clone = <T>(value: T): T => structuredClone(value);

describe('event schemas', () => {
  it('cover every event type of the catalogue', () => {
    expect([...EVENT_TYPES].sort()).to.deep.equal(Object.keys(sampleEvents).sort());
  });

  for (const type of Object.keys(sampleEvents) as DomainEventType[]) {
    describe(type, () => {
      const sample = sampleEvents[type];

      it('accepts a good sample at the current version', () => {
        expect(() => validateEvent(type, schemaVersionOf(type), sample.data)).not.to.throw();
      });

      it('refuses an unknown field', () => {
        const data = { ...clone(sample.data), extra: 1 };
        expect(() => validateEvent(type, 1, data)).to.throw(Error, new RegExp(`invalid ${type} event data`));
      });

      it('refuses a broken field', () => {
        const data = clone(sample.data) as Record<string, unknown>;
        breakages[type](data);
        expect(() => validateEvent(type, 1, data)).to.throw(Error, type);
      });

      it('refuses data that is not an object', () => {
        expect(() => validateEvent(type, 1, null)).to.throw(Error);
        expect(() => validateEvent(type, 1, [])).to.throw(Error);
      });
    });
  }

  it('refuses guest details in clear beside the sealed box', () => {
    const version = schemaVersionOf('PassCreated');
    const data = { ...passData(1), firstName: 'Ada' };
    expect(() => validateEvent('PassCreated', version, data)).to.throw(Error, /additional properties/);
    const sealed = { ...passData(1), guest: { ...passData(1).guest, email: 'ada@example.com' } };
    expect(() => validateEvent('PassCreated', version, sealed)).to.throw(Error, /guest/);
  });

  it('bounds the sealed box: iv of 12 bytes, tag of 16, ciphertext of at most 65536 characters, base64url only', () => {
    const version = schemaVersionOf('PassCreated');
    const withGuest = (change: Partial<Record<string, string>>) => ({ ...passData(1), guest: { ...passData(1).guest, ...change } });
    expect(() => validateEvent('PassCreated', version, withGuest({ ciphertext: 'A'.repeat(65536) }))).not.to.throw();
    for (const change of [
      { ciphertext: 'A'.repeat(65537) },
      { ciphertext: '' },
      { ciphertext: 'AAAA=' },
      { iv: 'A'.repeat(15) },
      { iv: 'A'.repeat(17) },
      { tag: 'A'.repeat(21) },
      { tag: 'A'.repeat(23) },
    ]) {
      expect(() => validateEvent('PassCreated', version, withGuest(change)), JSON.stringify(change).slice(0, 40)).to.throw(Error, /guest/);
    }
  });

  it('names every problem in the error', () => {
    const data = { ...clone(sampleEvents.OrganizationCreated.data), name: '', inviteAllowance: -1 };
    expect(() => validateEvent('OrganizationCreated', 1, data)).to.throw(Error, /\/name.*\/inviteAllowance|\/inviteAllowance.*\/name/);
  });

  it('refuses unknown types and unknown versions', () => {
    expect(() => validateEvent('NoSuchEvent', 1, {})).to.throw(Error, /unknown event type "NoSuchEvent"/);
    expect(() => schemaVersionOf('NoSuchEvent')).to.throw(Error, /unknown event type/);
    expect(() => validateEvent('FacilitySuspended', 99, sampleEvents.FacilitySuspended.data)).to.throw(Error, /no schema version 99/);
    expect(() => validateEvent('constructor', 1, {})).to.throw(Error, /unknown event type/);
  });

  describe('upcast', () => {
    it('is the identity at the current version', () => {
      const data = sampleEvents.PassRevoked.data;
      expect(upcast('PassRevoked', 1, data)).to.deep.equal({ schemaVersion: 1, data });
      expect(eventSchemas.upcast('PassRevoked', 1, data).data).to.equal(data);
    });

    it('refuses versions newer than this build and unknown types', () => {
      expect(() => upcast('PassRevoked', 2, {})).to.throw(Error, /newer than this build/);
      expect(() => upcast('PassRevoked', 0, {})).to.throw(Error, /invalid schema version/);
      expect(() => upcast('NoSuchEvent', 1, {})).to.throw(Error, /unknown event type/);
    });

    it('reads a DoorAccessRecorded v1 (before exit readers) as an entry', () => {
      const { direction: _direction, ...v1 } = sampleEvents.DoorAccessRecorded.data;
      expect(() => validateEvent('DoorAccessRecorded', 1, v1)).not.to.throw();
      const current = upcast('DoorAccessRecorded', 1, v1);
      expect(current).to.deep.equal({ schemaVersion: 2, data: { ...v1, direction: 'entry' } });
      expect(() => validateEvent('DoorAccessRecorded', 2, current.data)).not.to.throw();
    });

    it('reads a PassCreated from before the pass page (v1) as a batch without a link', () => {
      const { passLinkHash: _, ...v1 } = sampleEvents.PassCreated.data;
      expect(() => validateEvent('PassCreated', 1, v1)).not.to.throw();
      expect(upcast('PassCreated', 1, v1)).to.deep.equal({ schemaVersion: 2, data: { ...v1, passLinkHash: null } });
    });

    it('reads an ApiKeyCreated from before keys had names (v1) as an unnamed key, and a v2 name is 1 to 100 characters', () => {
      const { name: _, ...v1 } = sampleEvents.ApiKeyCreated.data;
      expect(() => validateEvent('ApiKeyCreated', 1, v1)).not.to.throw();
      expect(() => validateEvent('ApiKeyCreated', 1, { ...v1, name: 'x' })).to.throw(Error, /additional properties/);
      const current = upcast('ApiKeyCreated', 1, v1);
      expect(current).to.deep.equal({ schemaVersion: 2, data: { ...v1, name: null } });
      expect(() => validateEvent('ApiKeyCreated', 2, current.data)).not.to.throw();
      expect(() => validateEvent('ApiKeyCreated', 2, v1)).to.throw(Error, /name/);
      expect(() => validateEvent('ApiKeyCreated', 2, { ...v1, name: '' })).to.throw(Error, /name/);
      expect(() => validateEvent('ApiKeyCreated', 2, { ...v1, name: 'x'.repeat(101) })).to.throw(Error, /name/);
    });

    it('chains upcasters one version at a time', () => {
      const upcasters = {
        1: (d: unknown) => ({ ...(d as object), v2: true }),
        2: (d: unknown) => ({ ...(d as object), v3: true }),
      };
      expect(applyUpcasters('T', upcasters, 1, 3, { a: 1 })).to.deep.equal({ a: 1, v2: true, v3: true });
      expect(applyUpcasters('T', upcasters, 2, 3, { a: 1 })).to.deep.equal({ a: 1, v3: true });
      expect(() => applyUpcasters('T', upcasters, 1, 4, {})).to.throw(Error, /no upcaster from schema version 3/);
    });
  });
});
