// An invitation to join an organization (stream `invitation-{inviteId}`): addressed by email, and
// by user id as well when the address already belongs to a user of the organization, so the
// invited user finds it either way (spec, "Invitations"). Created once; answered once, in the
// console (/invitations): accepted or declined by the person it is addressed to, or cancelled by
// an admin of the organization before that. Accepting grants the role offered (on the user's own
// stream, by the use case: a retried accept by the same user changes nothing here and grants again).
import type { Decider } from './decider.js';
import { ROLES, type Role } from './events.js';
import { normaliseEmail } from './user-decider.js';
import { ConflictError, ValidationError } from '../errors.js';
import { NotFoundError } from '../errors.js';
import type { InvitationEvent } from '../oauth/oauth-events.js';

export type { InvitationEvent };

/** The user answering an invitation, as the users read model has them. */
export interface Invitee {
  readonly userId: number;
  readonly orgId: number;
  /** Lower-cased (normaliseEmail). */
  readonly email: string;
}

export type InvitationCommand =
  | {
      type: 'CreateInvitation';
      data: {
        inviteId: number;
        orgId: number;
        email: string;
        /** The organization's user with this email, when there is one (the caller looks it up). */
        userId: number | null;
        /** The role offered; null for plain membership. */
        role: string | null;
      };
    }
  | { type: 'AcceptInvitation'; data: { inviteId: number; invitee: Invitee } }
  | { type: 'DeclineInvitation'; data: { inviteId: number; invitee: Invitee } }
  | { type: 'CancelInvitation'; data: { inviteId: number; orgId: number } };

interface InvitationFacts {
  inviteId: number;
  orgId: number;
  email: string;
  userId: number | null;
  role: Role | null;
}

export type InvitationState =
  | { status: 'absent' }
  | ({ status: 'pending' } & InvitationFacts)
  | ({ status: 'accepted'; answeredBy: number } & InvitationFacts)
  | ({ status: 'declined'; answeredBy: number } & InvitationFacts)
  | ({ status: 'cancelled' } & InvitationFacts);

type ExistingInvitation = Exclude<InvitationState, { status: 'absent' }>;

/** Addressed to this user: by user id, or by the address (the spec's "matched by user id or email"). */
export function addressedTo(invitation: InvitationFacts, invitee: Invitee): boolean {
  return invitation.userId === invitee.userId || invitation.email === invitee.email;
}

/** The invitation as its invitee may see it: 404 when absent or addressed to someone else. */
function invitationFor(state: InvitationState, inviteId: number, invitee: Invitee): ExistingInvitation {
  if (state.status === 'absent' || !addressedTo(state, invitee)) throw new NotFoundError(`invitation ${inviteId} not found`);
  return state;
}

function answered(state: ExistingInvitation): ConflictError {
  return new ConflictError(
    state.status === 'cancelled' ? 'this invitation was cancelled by the organization' : `this invitation was already ${state.status}`,
  );
}

function assertId(value: number, field: string): void {
  if (!Number.isSafeInteger(value) || value < 1) throw new ValidationError(`${field} must be a positive whole number`);
}

function offeredRole(role: string | null): Role | null {
  if (role === null) return null;
  if (!(ROLES as readonly string[]).includes(role)) {
    throw new ValidationError(`unknown role "${role}"; roles are ${ROLES.join(', ')}`);
  }
  return role as Role;
}

export const invitationDecider: Decider<InvitationCommand, InvitationEvent, InvitationState> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    switch (event.type) {
      case 'InvitationCreated': {
        const { inviteId, orgId, email, userId, role } = event.data;
        return { status: 'pending', inviteId, orgId, email, userId, role: role as Role | null };
      }
      case 'InvitationAccepted':
        return state.status === 'pending' ? { ...state, status: 'accepted', answeredBy: event.data.userId } : state;
      case 'InvitationDeclined':
        return state.status === 'pending' ? { ...state, status: 'declined', answeredBy: event.data.userId } : state;
      case 'InvitationCancelled':
        return state.status === 'pending' ? { ...state, status: 'cancelled' } : state;
      default:
        // A type this build does not fold (written by newer code) leaves the state as it is.
        return state;
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'CreateInvitation': {
        const { inviteId, orgId, userId } = command.data;
        if (state.status !== 'absent') throw new ConflictError(`invitation ${inviteId} already exists`);
        assertId(inviteId, 'invitation id');
        assertId(orgId, 'organization id');
        if (userId !== null) assertId(userId, 'user id');
        return [
          {
            type: 'InvitationCreated',
            data: { inviteId, orgId, email: normaliseEmail(command.data.email), userId, role: offeredRole(command.data.role) },
          },
        ];
      }
      case 'AcceptInvitation': {
        const { inviteId, invitee } = command.data;
        const invitation = invitationFor(state, inviteId, invitee);
        // The same person accepting again (a retry after the role grant failed) records nothing.
        if (invitation.status === 'accepted' && invitation.answeredBy === invitee.userId) return [];
        if (invitation.status !== 'pending') throw answered(invitation);
        // A role is granted to a user of the inviting organization; someone signed in to another
        // one joins by the invitation's emailed link instead.
        if (invitee.orgId !== invitation.orgId) {
          throw new ConflictError('this invitation is from another organization: open the link in the invitation email to join it');
        }
        return [{ type: 'InvitationAccepted', data: { inviteId, orgId: invitation.orgId, userId: invitee.userId, role: invitation.role } }];
      }
      case 'DeclineInvitation': {
        const { inviteId, invitee } = command.data;
        const invitation = invitationFor(state, inviteId, invitee);
        if (invitation.status === 'declined' && invitation.answeredBy === invitee.userId) return [];
        if (invitation.status !== 'pending') throw answered(invitation);
        return [{ type: 'InvitationDeclined', data: { inviteId, orgId: invitation.orgId, userId: invitee.userId } }];
      }
      case 'CancelInvitation': {
        const { inviteId, orgId } = command.data;
        if (state.status === 'absent' || state.orgId !== orgId) throw new NotFoundError(`invitation ${inviteId} not found`);
        if (state.status === 'cancelled') return [];
        if (state.status !== 'pending') throw answered(state);
        return [{ type: 'InvitationCancelled', data: { inviteId, orgId } }];
      }
    }
  },
};
