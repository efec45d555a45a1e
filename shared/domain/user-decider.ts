// A user of an organization: identity, password hash, roles and an optional own invite allowance.
// Granting a role the user holds, or revoking one they lack, is a no-op, so retries are safe.
import type { Decider } from './decider.js';
import {
  ROLES,
  type Role,
  type RoleGranted,
  type RoleRevoked,
  type UserAdded,
  type UserCreationAbandoned,
  type UserInviteAllowanceChanged,
} from './events.js';
import { assertInviteAllowance } from './organization-decider.js';
import { PASSWORD_HASH_PATTERN } from '../crypto/password-hash.js';
import { ConflictError, NotFoundError, ValidationError } from '../errors.js';

export const MAX_USER_NAME_LENGTH = 100;
export const MAX_EMAIL_LENGTH = 254;
const EMAIL = /^[^\s@]+@[^\s@.][^\s@]*$/;
const PASSWORD_HASH = new RegExp(PASSWORD_HASH_PATTERN);

export type UserEvent = UserAdded | RoleGranted | RoleRevoked | UserInviteAllowanceChanged | UserCreationAbandoned;

interface UserRef {
  userId: number;
  /** When given, the user must belong to this organization (else 404). */
  orgId?: number;
}

export type UserCommand =
  | {
      type: 'AddUser';
      data: {
        userId: number;
        orgId: number;
        email: string;
        firstName: string;
        lastName: string;
        /** Already hashed (see crypto/password-hash.ts); null when the user signs in another way. */
        passwordHash: string | null;
        roles?: readonly Role[];
        inviteAllowance?: number | null;
      };
    }
  | { type: 'GrantRole'; data: UserRef & { role: Role } }
  | { type: 'RevokeRole'; data: UserRef & { role: Role } }
  | { type: 'ChangeInviteAllowance'; data: UserRef & { inviteAllowance: number | null } }
  /** Closes a user id whose creation never completed (member-email-decider.ts): no user may be added under it. */
  | { type: 'AbandonUserCreation'; data: { userId: number; orgId: number } };

export type UserState =
  | { status: 'absent' }
  /** Its creation never completed, and never will (UserCreationAbandoned). */
  | { status: 'abandoned' }
  | {
      status: 'active';
      userId: number;
      orgId: number;
      email: string;
      firstName: string;
      lastName: string;
      roles: readonly Role[];
      /** null: the organization's default applies. */
      inviteAllowance: number | null;
    };

export type ExistingUser = Extract<UserState, { status: 'active' }>;

/** The user as a caller of `orgId` may see it: 404 when not active (absent, abandoned) or another organization's. */
export function userInOrg(state: UserState, userId: number, orgId: number | undefined): ExistingUser {
  if (state.status !== 'active' || (orgId !== undefined && state.orgId !== orgId)) {
    throw new NotFoundError(`user ${userId} not found`);
  }
  return state;
}

export function hasRole(state: UserState, role: Role): boolean {
  return state.status === 'active' && state.roles.includes(role);
}

function assertRole(role: string): asserts role is Role {
  if (!(ROLES as readonly string[]).includes(role)) {
    throw new ValidationError(`unknown role "${role}"; roles are ${ROLES.join(', ')}`);
  }
}

function personName(value: string, field: string): string {
  const trimmed = value.trim();
  if (trimmed.length === 0 || trimmed.length > MAX_USER_NAME_LENGTH) {
    throw new ValidationError(`${field} must be 1 to ${MAX_USER_NAME_LENGTH} characters`);
  }
  return trimmed;
}

/** Emails are compared case-insensitively everywhere (sign-in, invitations), so they are stored lower-cased. */
export function normaliseEmail(value: string): string {
  const email = value.trim().toLowerCase();
  if (email.length > MAX_EMAIL_LENGTH || !EMAIL.test(email)) throw new ValidationError('email is not a valid address');
  return email;
}

export const userDecider: Decider<UserCommand, UserEvent, UserState> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    switch (event.type) {
      case 'UserAdded':
        return {
          status: 'active',
          userId: event.data.userId,
          orgId: event.data.orgId,
          email: event.data.email,
          firstName: event.data.firstName,
          lastName: event.data.lastName,
          roles: [],
          inviteAllowance: event.data.inviteAllowance,
        };
      case 'UserCreationAbandoned':
        return state.status === 'absent' ? { status: 'abandoned' } : state;
      case 'RoleGranted':
        if (state.status !== 'active' || state.roles.includes(event.data.role)) return state;
        return { ...state, roles: [...state.roles, event.data.role] };
      case 'RoleRevoked':
        if (state.status !== 'active') return state;
        return { ...state, roles: state.roles.filter((r) => r !== event.data.role) };
      case 'UserInviteAllowanceChanged':
        return state.status !== 'active' ? state : { ...state, inviteAllowance: event.data.inviteAllowance };
      default:
        // A type this build does not fold (written by newer code) leaves the state as it is.
        return state;
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'AddUser': {
        const { userId, orgId } = command.data;
        if (state.status === 'active') throw new ConflictError(`user ${userId} already exists`);
        if (state.status === 'abandoned') throw new ConflictError(`adding user ${userId} took too long and was given up; add the user again`);
        const email = normaliseEmail(command.data.email);
        const firstName = personName(command.data.firstName, 'first name');
        const lastName = personName(command.data.lastName, 'last name');
        // Guards against a caller handing over the password itself: only a hash may enter the log.
        if (command.data.passwordHash !== null && !PASSWORD_HASH.test(command.data.passwordHash)) {
          throw new ValidationError('password hash is not in the scrypt format');
        }
        const inviteAllowance = command.data.inviteAllowance ?? null;
        if (inviteAllowance !== null) assertInviteAllowance(inviteAllowance);
        const roles = command.data.roles ?? [];
        for (const role of roles) assertRole(role);
        const events: UserEvent[] = [
          {
            type: 'UserAdded',
            data: { userId, orgId, email, firstName, lastName, passwordHash: command.data.passwordHash, inviteAllowance },
          },
        ];
        // In catalogue order, once each, whatever order or repetition the caller used.
        for (const role of ROLES.filter((r) => roles.includes(r))) {
          events.push({ type: 'RoleGranted', data: { userId, orgId, role } });
        }
        return events;
      }
      case 'GrantRole': {
        assertRole(command.data.role);
        const user = userInOrg(state, command.data.userId, command.data.orgId);
        if (user.roles.includes(command.data.role)) return [];
        return [{ type: 'RoleGranted', data: { userId: user.userId, orgId: user.orgId, role: command.data.role } }];
      }
      case 'RevokeRole': {
        assertRole(command.data.role);
        const user = userInOrg(state, command.data.userId, command.data.orgId);
        if (!user.roles.includes(command.data.role)) return [];
        return [{ type: 'RoleRevoked', data: { userId: user.userId, orgId: user.orgId, role: command.data.role } }];
      }
      case 'AbandonUserCreation': {
        if (state.status === 'active') throw new ConflictError(`user ${command.data.userId} exists`);
        if (state.status === 'abandoned') return [];
        return [{ type: 'UserCreationAbandoned', data: command.data }];
      }
      case 'ChangeInviteAllowance': {
        const user = userInOrg(state, command.data.userId, command.data.orgId);
        const inviteAllowance = command.data.inviteAllowance;
        if (inviteAllowance !== null) assertInviteAllowance(inviteAllowance);
        if (inviteAllowance === user.inviteAllowance) return [];
        return [{ type: 'UserInviteAllowanceChanged', data: { userId: user.userId, orgId: user.orgId, inviteAllowance } }];
      }
    }
  },
};
