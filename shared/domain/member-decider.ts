// A member of an organization's directory (member-events.ts), on its own stream `member-{emp_id}`.
// Pure: the use cases (command-service/members/) seal the names and contact before deciding.
//
// Sealed boxes cannot be compared (each seal has a fresh IV), so a profile change carries,
// besides the new sealed profile, its plaintext and the basis it was compared against: the boxes
// the use case opened and what they held. The change records nothing when the stream still holds
// exactly those boxes and every value is the same; otherwise it records the whole new profile.
// A basis that no longer matches (another write got in between) records the profile, which is
// never wrong, only not minimal.
import type { Decider } from './decider.js';
import type { Sealed } from './events.js';
import type { MemberContact, MemberDomainEvent, MemberName } from './member-events.js';
import { ConflictError, NotFoundError } from '../errors.js';

export type MemberEvent = MemberDomainEvent;

/** The clear and sealed fields of a profile, as a MemberJoined / MemberProfileChanged records them. */
export interface SealedMemberProfile {
  readonly name: Sealed;
  /** Null when the member has neither an email nor a phone. */
  readonly contact: Sealed | null;
  readonly jobTitle: string | null;
  readonly department: string | null;
  readonly externalId: string | null;
}

/** The plaintext of a profile's sealed parts. */
export interface MemberSecrets {
  readonly name: MemberName;
  readonly contact: MemberContact | null;
}

/** What the use case compared the new profile against: the stream's boxes as it read them, opened. */
export interface ProfileBasis {
  readonly name: Sealed;
  readonly contact: Sealed | null;
  readonly plain: MemberSecrets;
}

export type MemberCommand =
  | { type: 'AddMember'; data: SealedMemberProfile & { memberId: string; orgId: number; userId: number | null } }
  | {
      type: 'ChangeMemberProfile';
      data: {
        memberId: string;
        /** When given, a member of another organization is 404. */
        orgId?: number;
        profile: SealedMemberProfile;
        /** The plaintext of `profile.name` and `profile.contact`. */
        plain: MemberSecrets;
        /** Null: nothing to compare with, the profile is recorded. */
        basis: ProfileBasis | null;
      };
    }
  | { type: 'DeactivateMember'; data: { memberId: string; orgId?: number } }
  | { type: 'ReactivateMember'; data: { memberId: string; orgId?: number } }
  | { type: 'EraseMember'; data: { memberId: string; orgId?: number; includeName: boolean } };

export interface KnownMember extends SealedMemberProfile {
  readonly status: 'active' | 'inactive';
  readonly memberId: string;
  readonly orgId: number;
  readonly userId: number | null;
  /** The key the name is sealed under (destroyed once `nameErased`). */
  readonly nameKeyId: string;
  /** The key the contact was last sealed under, kept while the contact is null; null when there never was one. */
  readonly contactKeyId: string | null;
  /** The contact key was destroyed: `contact` is null and stays so. */
  readonly contactErased: boolean;
  /** The name key was destroyed too: the profile can no longer change. */
  readonly nameErased: boolean;
}

export type MemberState = { readonly status: 'absent' } | KnownMember;

export const MEMBER_ERASED = (memberId: string) => `member ${memberId} was erased`;

function sameSealed(a: Sealed | null, b: Sealed | null): boolean {
  if (a === null || b === null) return a === b;
  return a.keyId === b.keyId && a.iv === b.iv && a.ciphertext === b.ciphertext && a.tag === b.tag;
}

function sameSecrets(a: MemberSecrets, b: MemberSecrets): boolean {
  const sameContact =
    a.contact === null || b.contact === null ? a.contact === b.contact : a.contact.email === b.contact.email && a.contact.phone === b.contact.phone;
  return a.name.firstName === b.name.firstName && a.name.lastName === b.name.lastName && sameContact;
}

function known(state: MemberState, memberId: string, orgId: number | undefined): KnownMember {
  if (state.status === 'absent' || (orgId !== undefined && state.orgId !== orgId)) throw new NotFoundError(`member ${memberId} not found`);
  return state;
}

export const memberDecider: Decider<MemberCommand, MemberEvent, MemberState> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    switch (event.type) {
      case 'MemberJoined': {
        const d = event.data;
        return {
          status: 'active',
          memberId: d.memberId,
          orgId: d.orgId,
          userId: d.userId,
          name: d.name,
          contact: d.contact,
          jobTitle: d.jobTitle,
          department: d.department,
          externalId: d.externalId,
          nameKeyId: d.name.keyId,
          contactKeyId: d.contact?.keyId ?? null,
          contactErased: false,
          nameErased: false,
        };
      }
      case 'MemberProfileChanged': {
        if (state.status === 'absent') return state;
        const d = event.data;
        return {
          ...state,
          name: d.name,
          contact: d.contact,
          jobTitle: d.jobTitle,
          department: d.department,
          externalId: d.externalId,
          nameKeyId: d.name.keyId,
          contactKeyId: d.contact?.keyId ?? state.contactKeyId,
        };
      }
      case 'MemberDeactivated':
        return state.status === 'absent' ? state : { ...state, status: 'inactive' };
      case 'MemberReactivated':
        return state.status === 'absent' ? state : { ...state, status: 'active' };
      case 'MemberErased':
        if (state.status === 'absent') return state;
        return { ...state, contact: null, contactErased: true, nameErased: state.nameErased || event.data.includeName };
      default:
        // A type this build does not fold (written by newer code) leaves the state as it is.
        return state;
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'AddMember': {
        if (state.status !== 'absent') throw new ConflictError(`member ${command.data.memberId} already exists`);
        const d = command.data;
        return [
          {
            type: 'MemberJoined',
            data: {
              memberId: d.memberId,
              orgId: d.orgId,
              name: d.name,
              contact: d.contact,
              jobTitle: d.jobTitle,
              department: d.department,
              externalId: d.externalId,
              userId: d.userId,
            },
          },
        ];
      }
      case 'ChangeMemberProfile': {
        const member = known(state, command.data.memberId, command.data.orgId);
        const { profile, plain, basis } = command.data;
        if ((profile.contact === null) !== (plain.contact === null)) throw new Error('the sealed contact and its plaintext disagree');
        if (member.nameErased) throw new ConflictError(MEMBER_ERASED(member.memberId));
        if (member.contactErased && plain.contact !== null) {
          throw new ConflictError(`${MEMBER_ERASED(member.memberId)}: its contact details cannot be added again`);
        }
        const unchanged =
          basis !== null &&
          sameSealed(basis.name, member.name) &&
          sameSealed(basis.contact, member.contact) &&
          sameSecrets(basis.plain, plain) &&
          profile.jobTitle === member.jobTitle &&
          profile.department === member.department &&
          profile.externalId === member.externalId;
        if (unchanged) return [];
        return [
          {
            type: 'MemberProfileChanged',
            data: {
              memberId: member.memberId,
              orgId: member.orgId,
              name: profile.name,
              contact: profile.contact,
              jobTitle: profile.jobTitle,
              department: profile.department,
              externalId: profile.externalId,
            },
          },
        ];
      }
      case 'DeactivateMember': {
        const member = known(state, command.data.memberId, command.data.orgId);
        if (member.status === 'inactive') return [];
        return [{ type: 'MemberDeactivated', data: { memberId: member.memberId, orgId: member.orgId } }];
      }
      case 'ReactivateMember': {
        const member = known(state, command.data.memberId, command.data.orgId);
        if (member.status === 'active') return [];
        return [{ type: 'MemberReactivated', data: { memberId: member.memberId, orgId: member.orgId } }];
      }
      case 'EraseMember': {
        const member = known(state, command.data.memberId, command.data.orgId);
        // Already erased at least as far as asked: nothing (the use case still destroys the keys).
        if (member.contactErased && (member.nameErased || !command.data.includeName)) return [];
        return [{ type: 'MemberErased', data: { memberId: member.memberId, orgId: member.orgId, includeName: command.data.includeName } }];
      }
    }
  },
};
