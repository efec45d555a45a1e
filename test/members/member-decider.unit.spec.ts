import { memberDecider, type MemberCommand, type MemberEvent, type MemberSecrets, type SealedMemberProfile } from '../../shared/domain/member-decider.js';
import type { Sealed } from '../../shared/domain/events.js';
import { ConflictError, NotFoundError } from '../../shared/errors.js';
import { deciderSpec } from '../support/given-when-then.js';

const spec = deciderSpec(memberDecider);
const memberId = `emp_${'a'.repeat(32)}`;
const box = (keyId: string, ciphertext: string): Sealed => ({ keyId, iv: 'AAAAAAAAAAAAAAAA', ciphertext, tag: 'B'.repeat(22) });
const nameBox = box('name-key', 'name1');
const contactBox = box('contact-key', 'contact1');
const profile: SealedMemberProfile = { name: nameBox, contact: contactBox, jobTitle: 'Engineer', department: 'R&D', externalId: 'HR-1' };
const plain: MemberSecrets = { name: { firstName: 'Ada', lastName: 'Lovelace' }, contact: { email: 'ada@example.com', phone: null } };

const joined: MemberEvent = { type: 'MemberJoined', data: { memberId, orgId: 1, userId: null, ...profile } };
const deactivated: MemberEvent = { type: 'MemberDeactivated', data: { memberId, orgId: 1 } };
const erasedContact: MemberEvent = { type: 'MemberErased', data: { memberId, orgId: 1, includeName: false } };
const erasedAll: MemberEvent = { type: 'MemberErased', data: { memberId, orgId: 1, includeName: true } };

const change = (over: Partial<Extract<MemberCommand, { type: 'ChangeMemberProfile' }>['data']> = {}): MemberCommand => ({
  type: 'ChangeMemberProfile',
  data: { memberId, profile, plain, basis: { name: nameBox, contact: contactBox, plain }, ...over },
});

describe('member decider', () => {
  describe('AddMember', () => {
    it('records MemberJoined with the sealed profile', () => {
      spec.given([]).when({ type: 'AddMember', data: { memberId, orgId: 1, userId: null, ...profile } }).then([joined]);
    });

    it('keeps the user the member is', () => {
      spec
        .given([])
        .when({ type: 'AddMember', data: { memberId, orgId: 1, userId: 7, ...profile } })
        .then([{ type: 'MemberJoined', data: { ...joined.data, userId: 7 } as Extract<MemberEvent, { type: 'MemberJoined' }>['data'] }]);
    });

    it('refuses a member whose stream exists', () => {
      spec.given([joined]).when({ type: 'AddMember', data: { memberId, orgId: 1, userId: null, ...profile } }).thenThrows(ConflictError);
    });
  });

  describe('ChangeMemberProfile', () => {
    it('is 404 for an unknown member, and for a member of another organization', () => {
      spec.given([]).when(change()).thenThrows(NotFoundError);
      spec.given([joined]).when(change({ orgId: 2 })).thenThrows(NotFoundError);
    });

    it('records nothing when the boxes are the ones compared and every value is the same', () => {
      spec.given([joined]).when(change()).thenNothing();
    });

    it('records the whole profile when a clear field changed', () => {
      const next = { ...profile, jobTitle: 'Lead' };
      spec.given([joined]).when(change({ profile: next })).then([{ type: 'MemberProfileChanged', data: { memberId, orgId: 1, ...next } }]);
    });

    it('records the profile when the plaintext changed', () => {
      const newBox = box('contact-key', 'contact2');
      const next = { ...profile, contact: newBox };
      spec
        .given([joined])
        .when(change({ profile: next, plain: { ...plain, contact: { email: 'ada@new.example', phone: null } } }))
        .then([{ type: 'MemberProfileChanged', data: { memberId, orgId: 1, ...next } }]);
    });

    it('records the profile when the stream no longer holds the boxes compared (another write got in), or there was no basis', () => {
      const other = box('name-key', 'name-other');
      spec.given([joined]).when(change({ basis: { name: other, contact: contactBox, plain } })).thenInspect((events) => {
        if (events.length !== 1 || events[0]!.type !== 'MemberProfileChanged') throw new Error('expected a MemberProfileChanged');
      });
      spec.given([joined]).when(change({ basis: null })).thenInspect((events) => {
        if (events.length !== 1) throw new Error('expected one event');
      });
    });

    it('after an erasure refuses a change that would add the contact again, and allows one without it', () => {
      spec.given([joined, erasedContact]).when(change()).thenThrows(ConflictError, /erased/);
      const noContact = { ...profile, contact: null, jobTitle: 'Lead' };
      spec
        .given([joined, erasedContact])
        .when(change({ profile: noContact, plain: { ...plain, contact: null }, basis: { name: nameBox, contact: null, plain: { ...plain, contact: null } } }))
        .then([{ type: 'MemberProfileChanged', data: { memberId, orgId: 1, ...noContact } }]);
    });

    it('refuses every change once the name was erased too', () => {
      const noContact = { ...profile, contact: null };
      spec.given([joined, erasedAll]).when(change({ profile: noContact, plain: { ...plain, contact: null } })).thenThrows(ConflictError, /erased/);
    });
  });

  describe('DeactivateMember / ReactivateMember', () => {
    it('deactivates an active member and reactivates an inactive one', () => {
      spec.given([joined]).when({ type: 'DeactivateMember', data: { memberId } }).then([deactivated]);
      spec.given([joined, deactivated]).when({ type: 'ReactivateMember', data: { memberId } }).then([{ type: 'MemberReactivated', data: { memberId, orgId: 1 } }]);
    });

    it('records nothing when the member is already so', () => {
      spec.given([joined, deactivated]).when({ type: 'DeactivateMember', data: { memberId } }).thenNothing();
      spec.given([joined]).when({ type: 'ReactivateMember', data: { memberId } }).thenNothing();
    });

    it('is 404 for an unknown member', () => {
      spec.given([]).when({ type: 'DeactivateMember', data: { memberId } }).thenThrows(NotFoundError);
      spec.given([]).when({ type: 'ReactivateMember', data: { memberId } }).thenThrows(NotFoundError);
    });
  });

  describe('EraseMember', () => {
    it('erases the contact, or the contact and the name', () => {
      spec.given([joined]).when({ type: 'EraseMember', data: { memberId, includeName: false } }).then([erasedContact]);
      spec.given([joined]).when({ type: 'EraseMember', data: { memberId, includeName: true } }).then([erasedAll]);
    });

    it('is idempotent, and goes on to the name when asked after a contact-only erasure', () => {
      spec.given([joined, erasedContact]).when({ type: 'EraseMember', data: { memberId, includeName: false } }).thenNothing();
      spec.given([joined, erasedAll]).when({ type: 'EraseMember', data: { memberId, includeName: true } }).thenNothing();
      spec.given([joined, erasedAll]).when({ type: 'EraseMember', data: { memberId, includeName: false } }).thenNothing();
      spec.given([joined, erasedContact]).when({ type: 'EraseMember', data: { memberId, includeName: true } }).then([erasedAll]);
    });

    it('leaves the status as it was, and the state says what was erased', () => {
      spec.given([joined, deactivated]).when({ type: 'EraseMember', data: { memberId, includeName: false } }).thenInspect((_, state) => {
        if (state.status !== 'inactive' || !state.contactErased || state.nameErased || state.contact !== null) throw new Error(JSON.stringify(state));
      });
    });

    it('is 404 for an unknown member', () => {
      spec.given([]).when({ type: 'EraseMember', data: { memberId, includeName: true } }).thenThrows(NotFoundError);
    });
  });
});
