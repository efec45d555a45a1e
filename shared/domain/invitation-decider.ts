// An invitation to join an organization (stream `invitation-{inviteId}`): addressed by email, and
// by user id as well when the address already belongs to a user of the organization, so the
// invited user finds it either way (spec, "Invitations"). Created once; accepting or declining
// happens in the product UI, outside this service.
import type { Decider } from './decider.js';
import { ROLES, type Role } from './events.js';
import { normaliseEmail } from './user-decider.js';
import { ConflictError, ValidationError } from '../errors.js';
import type { InvitationCreated } from '../oauth/oauth-events.js';

export type InvitationEvent = InvitationCreated;

export type InvitationCommand = {
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
};

export type InvitationState =
  | { status: 'absent' }
  | { status: 'pending'; inviteId: number; orgId: number; email: string; userId: number | null; role: Role | null };

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
    }
  },
};
