import { expect } from 'chai';
import { usersProjection } from '../../projections/users-projection.js';
import { EventLog, feed, feedOneByOne, snapshot, visible } from './fixtures.js';

describe('users projection', () => {
  const history = () => {
    const log = new EventLog();
    log.add({
      type: 'UserAdded',
      data: { userId: 100, orgId: 1, email: 'boss@acme.test', firstName: 'Bo', lastName: 'Ss', passwordHash: 'scrypt$abc', inviteAllowance: null },
    });
    log.add({ type: 'RoleGranted', data: { userId: 100, orgId: 1, role: 'admin' } });
    log.add({ type: 'RoleGranted', data: { userId: 100, orgId: 1, role: 'self_invite' } });
    log.add({ type: 'RoleGranted', data: { userId: 100, orgId: 1, role: 'employee_view' } });
    log.add({ type: 'RoleRevoked', data: { userId: 100, orgId: 1, role: 'self_invite' } });
    log.add({ type: 'UserInviteAllowanceChanged', data: { userId: 100, orgId: 1, inviteAllowance: 12 } });
    return log;
  };

  it('keeps roles, the password hash and the allowance override', () => {
    const log = history();
    expect(visible(feed(usersProjection, log.events))).to.deep.equal({
      '100': {
        user_id: 100,
        org_id: 1,
        email: 'boss@acme.test',
        first_name: 'Bo',
        last_name: 'Ss',
        password_hash: 'scrypt$abc',
        roles: ['admin', 'employee_view'],
        invite_allowance: 12,
        created_at: new Date(log.events[0]!.metadata.occurredAt),
      },
    });
  });

  it('grants a role once and revokes an absent role as a no-op', () => {
    const log = history();
    log.add({ type: 'RoleGranted', data: { userId: 100, orgId: 1, role: 'admin' } });
    log.add({ type: 'RoleRevoked', data: { userId: 100, orgId: 1, role: 'self_invite' } });
    expect(visible(feed(usersProjection, log.events))['100']!.roles).to.deep.equal(['admin', 'employee_view']);
  });

  it('is idempotent: a grant and revoke replayed do not resurrect the revoked role', () => {
    const log = history();
    const once = snapshot(feed(usersProjection, log.events));
    expect(visible(feed(usersProjection, log.events, snapshot(once)))).to.deep.equal(visible(once));
    expect(visible(feedOneByOne(usersProjection, [...log.events, ...log.events]))).to.deep.equal(visible(once));
  });
});
