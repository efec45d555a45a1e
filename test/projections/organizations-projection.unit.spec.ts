import { expect } from 'chai';
import { organizationsProjection } from '../../projections/organizations-projection.js';
import { EventLog, feed, feedOneByOne, passCreated, snapshot, visible } from './fixtures.js';

describe('organizations projection', () => {
  const history = () => {
    const log = new EventLog();
    log.add({ type: 'OrganizationCreated', data: { orgId: 1, name: 'Acme', inviteAllowance: 50 } });
    log.add({ type: 'OrganizationCreated', data: { orgId: 2, name: 'Globex', inviteAllowance: 5 } });
    for (let i = 1; i <= 5; i++) log.add(passCreated(i, { orgId: 1 }));
    log.add(passCreated(6, { orgId: 2 }));
    log.add({ type: 'OrganizationInviteAllowanceChanged', data: { orgId: 2, inviteAllowance: 20 } });
    log.add({ type: 'PassRevoked', data: { passId: 1, publicId: 'gst_00000001', orgId: 1, facilityId: 10, qrHash: 'hash-1' } });
    return log;
  };

  it('counts every pass of the organization (revoked ones stay counted) and follows the allowance', () => {
    const log = history();
    const rows = visible(feed(organizationsProjection, log.events));
    expect(rows['1']).to.deep.equal({
      org_id: 1,
      name: 'Acme',
      invite_allowance: 50,
      pass_count: 5,
      created_at: new Date(log.events[0]!.metadata.occurredAt),
    });
    expect(rows['2']).to.include({ name: 'Globex', invite_allowance: 20, pass_count: 1 });
  });

  it('keeps the counter exact when events are delivered again, in a batch or one by one', () => {
    const log = history();
    const once = snapshot(feed(organizationsProjection, log.events));
    expect(visible(feed(organizationsProjection, log.events, snapshot(once)))).to.deep.equal(visible(once));
    expect(visible(feedOneByOne(organizationsProjection, [...log.events, ...log.events]))).to.deep.equal(visible(once));
    // A repeat of only the middle of the history (a redelivered batch) changes nothing either.
    expect(visible(feed(organizationsProjection, log.events.slice(3, 6), snapshot(once)))).to.deep.equal(visible(once));
  });

  it('does not count passes of an organization it has not seen', () => {
    const log = new EventLog();
    log.add(passCreated(1, { orgId: 9 }));
    expect(feed(organizationsProjection, log.events).size).to.equal(0);
  });
});
