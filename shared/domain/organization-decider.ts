// An organization: its name and the default monthly guest-invite allowance of its users.
import type { Decider } from './decider.js';
import { DEFAULT_INVITE_ALLOWANCE, type OrganizationCreated, type OrganizationInviteAllowanceChanged } from './events.js';
import { ConflictError, NotFoundError, ValidationError } from '../errors.js';

export const MAX_ORGANIZATION_NAME_LENGTH = 200;
/** Upper bound for any invite allowance: a typo guard, far above any real month of invitations. */
export const MAX_INVITE_ALLOWANCE = 1_000_000;

export type OrganizationEvent = OrganizationCreated | OrganizationInviteAllowanceChanged;

export type OrganizationCommand =
  | { type: 'CreateOrganization'; data: { orgId: number; name: string; inviteAllowance?: number } }
  | { type: 'ChangeInviteAllowance'; data: { orgId: number; inviteAllowance: number } };

export type OrganizationState =
  | { status: 'absent' }
  | { status: 'active'; orgId: number; name: string; inviteAllowance: number };

/** Shared by the organization and user deciders: an allowance is a whole number of passes per month. */
export function assertInviteAllowance(value: number): void {
  if (!Number.isSafeInteger(value) || value < 0 || value > MAX_INVITE_ALLOWANCE) {
    throw new ValidationError(`invite allowance must be a whole number between 0 and ${MAX_INVITE_ALLOWANCE}`);
  }
}

export const organizationDecider: Decider<OrganizationCommand, OrganizationEvent, OrganizationState> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    switch (event.type) {
      case 'OrganizationCreated':
        return { status: 'active', orgId: event.data.orgId, name: event.data.name, inviteAllowance: event.data.inviteAllowance };
      case 'OrganizationInviteAllowanceChanged':
        return state.status === 'active' ? { ...state, inviteAllowance: event.data.inviteAllowance } : state;
      default:
        // A type this build does not fold (written by newer code) leaves the state as it is.
        return state;
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'CreateOrganization': {
        if (state.status !== 'absent') throw new ConflictError(`organization ${command.data.orgId} already exists`);
        const name = command.data.name.trim();
        if (name.length === 0 || name.length > MAX_ORGANIZATION_NAME_LENGTH) {
          throw new ValidationError(`organization name must be 1 to ${MAX_ORGANIZATION_NAME_LENGTH} characters`);
        }
        const inviteAllowance = command.data.inviteAllowance ?? DEFAULT_INVITE_ALLOWANCE;
        assertInviteAllowance(inviteAllowance);
        return [{ type: 'OrganizationCreated', data: { orgId: command.data.orgId, name, inviteAllowance } }];
      }
      case 'ChangeInviteAllowance': {
        if (state.status === 'absent') throw new NotFoundError(`organization ${command.data.orgId} not found`);
        assertInviteAllowance(command.data.inviteAllowance);
        // Setting the current value again records nothing: the command is idempotent.
        if (command.data.inviteAllowance === state.inviteAllowance) return [];
        return [
          {
            type: 'OrganizationInviteAllowanceChanged',
            data: { orgId: state.orgId, inviteAllowance: command.data.inviteAllowance },
          },
        ];
      }
    }
  },
};
