import { userDecider, type UserCommand, type UserEvent } from '../../shared/domain/user-decider.js';
import { ConflictError, NotFoundError, ValidationError } from '../../shared/errors.js';
import { deciderSpec } from '../support/given-when-then.js';
import { samplePasswordHash } from '../support/domain-fixtures.js';

const spec = deciderSpec(userDecider);
const addUser = (overrides: Partial<Extract<UserCommand, { type: 'AddUser' }>['data']> = {}): UserCommand => ({
  type: 'AddUser',
  data: {
    userId: 100,
    orgId: 1,
    email: 'Grace@Example.COM ',
    firstName: 'Grace',
    lastName: 'Hopper',
    passwordHash: samplePasswordHash,
    ...overrides,
  },
});
const added: UserEvent = {
  type: 'UserAdded',
  data: {
    userId: 100,
    orgId: 1,
    email: 'grace@example.com',
    firstName: 'Grace',
    lastName: 'Hopper',
    passwordHash: samplePasswordHash,
    inviteAllowance: null,
  },
};
const granted = (role: 'admin' | 'self_invite' | 'employee_view'): UserEvent => ({ type: 'RoleGranted', data: { userId: 100, orgId: 1, role } });
const revoked = (role: 'admin' | 'self_invite' | 'employee_view'): UserEvent => ({ type: 'RoleRevoked', data: { userId: 100, orgId: 1, role } });

describe('user decider', () => {
  describe('AddUser', () => {
    it('adds the user with a lower-cased email and no roles', () => {
      spec.given([]).when(addUser()).then([added]);
    });

    it('grants each requested role once, in catalogue order', () => {
      spec
        .given([])
        .when(addUser({ roles: ['self_invite', 'admin', 'self_invite'] }))
        .then([added, granted('admin'), granted('self_invite')]);
    });

    it('keeps an own invite allowance', () => {
      spec
        .given([])
        .when(addUser({ inviteAllowance: 5 }))
        .then([{ type: 'UserAdded', data: { ...added.data, inviteAllowance: 5 } } as UserEvent]);
    });

    it('accepts a user without a password', () => {
      spec
        .given([])
        .when(addUser({ passwordHash: null }))
        .then([{ type: 'UserAdded', data: { ...added.data, passwordHash: null } } as UserEvent]);
    });

    it('refuses a password that is not a scrypt hash, so a clear password can never be recorded', () => {
      spec.given([]).when(addUser({ passwordHash: 'hunter2hunter2' })).thenThrows(ValidationError, /scrypt/);
    });

    it('refuses an unknown role, an invalid email, blank names and a bad allowance', () => {
      spec.given([]).when(addUser({ roles: ['owner' as 'admin'] })).thenThrows(ValidationError, /unknown role/);
      spec.given([]).when(addUser({ email: 'not-an-email' })).thenThrows(ValidationError);
      spec.given([]).when(addUser({ firstName: ' ' })).thenThrows(ValidationError);
      spec.given([]).when(addUser({ lastName: 'x'.repeat(101) })).thenThrows(ValidationError);
      spec.given([]).when(addUser({ inviteAllowance: -1 })).thenThrows(ValidationError);
    });

    it('refuses to add the same user twice', () => {
      spec.given([added]).when(addUser()).thenThrows(ConflictError);
    });
  });

  describe('GrantRole', () => {
    it('grants a role the user lacks', () => {
      spec.given([added]).when({ type: 'GrantRole', data: { userId: 100, role: 'admin' } }).then([granted('admin')]);
    });
    it('is a no-op for a role the user holds', () => {
      spec.given([added, granted('admin')]).when({ type: 'GrantRole', data: { userId: 100, role: 'admin' } }).thenNothing();
    });
    it('grants again after a revocation', () => {
      spec
        .given([added, granted('admin'), revoked('admin')])
        .when({ type: 'GrantRole', data: { userId: 100, role: 'admin' } })
        .then([granted('admin')]);
    });
    it('is 404 for an unknown user or another organization', () => {
      spec.given([]).when({ type: 'GrantRole', data: { userId: 100, role: 'admin' } }).thenThrows(NotFoundError);
      spec.given([added]).when({ type: 'GrantRole', data: { userId: 100, orgId: 2, role: 'admin' } }).thenThrows(NotFoundError);
    });
    it('refuses an unknown role', () => {
      spec.given([added]).when({ type: 'GrantRole', data: { userId: 100, role: 'root' as 'admin' } }).thenThrows(ValidationError);
    });
  });

  describe('RevokeRole', () => {
    it('revokes a held role', () => {
      spec.given([added, granted('self_invite')]).when({ type: 'RevokeRole', data: { userId: 100, role: 'self_invite' } }).then([revoked('self_invite')]);
    });
    it('is a no-op for a role the user lacks', () => {
      spec.given([added, granted('admin')]).when({ type: 'RevokeRole', data: { userId: 100, role: 'self_invite' } }).thenNothing();
    });
    it('is 404 for an unknown user', () => {
      spec.given([]).when({ type: 'RevokeRole', data: { userId: 100, role: 'admin' } }).thenThrows(NotFoundError);
    });
  });

  describe('ChangeInviteAllowance', () => {
    it('sets an own allowance, and clears it back to the organization default', () => {
      const set: UserEvent = { type: 'UserInviteAllowanceChanged', data: { userId: 100, orgId: 1, inviteAllowance: 3 } };
      spec.given([added]).when({ type: 'ChangeInviteAllowance', data: { userId: 100, inviteAllowance: 3 } }).then([set]);
      spec
        .given([added, set])
        .when({ type: 'ChangeInviteAllowance', data: { userId: 100, inviteAllowance: null } })
        .then([{ type: 'UserInviteAllowanceChanged', data: { userId: 100, orgId: 1, inviteAllowance: null } }]);
    });
    it('is a no-op when unchanged', () => {
      spec.given([added]).when({ type: 'ChangeInviteAllowance', data: { userId: 100, inviteAllowance: null } }).thenNothing();
    });
    it('is 404 for an unknown user and 400 for a bad allowance', () => {
      spec.given([]).when({ type: 'ChangeInviteAllowance', data: { userId: 100, inviteAllowance: 3 } }).thenThrows(NotFoundError);
      spec.given([added]).when({ type: 'ChangeInviteAllowance', data: { userId: 100, inviteAllowance: 2.5 } }).thenThrows(ValidationError);
    });
  });

  describe('AbandonUserCreation', () => {
    const abandon: UserCommand = { type: 'AbandonUserCreation', data: { userId: 100, orgId: 1 } };
    const abandoned: UserEvent = { type: 'UserCreationAbandoned', data: { userId: 100, orgId: 1 } };

    it('closes an id no user was added under, once', () => {
      spec.given([]).when(abandon).then([abandoned]);
      spec.given([abandoned]).when(abandon).thenNothing();
    });

    it('refuses to close the id of an existing user', () => {
      spec.given([added]).when(abandon).thenThrows(ConflictError);
    });

    it('keeps a user from being added under a closed id, and the closed id from being used as a user', () => {
      spec.given([abandoned]).when(addUser()).thenThrows(ConflictError, /given up/);
      spec.given([abandoned]).when({ type: 'GrantRole', data: { userId: 100, role: 'admin' } }).thenThrows(NotFoundError);
    });
  });
});
