import { expect } from 'chai';
import { inviteAllowanceUsageProjection } from '../../projections/invite-allowance-usage-projection.js';
import { EventLog, feed, feedOneByOne, passCreated, snapshot, visible } from './fixtures.js';

describe('invite_allowance_usage projection', () => {
  const history = () => {
    const log = new EventLog();
    for (let i = 1; i <= 3; i++) log.add(passCreated(i, { createdBy: 100 }), { stream: 'guest-invites-100-2025-03' });
    log.add(passCreated(4, { createdBy: 100 }), { stream: 'guest-invites-100-2025-04' });
    log.add(passCreated(5, { createdBy: 200 }), { stream: 'guest-invites-200-2025-03' });
    log.add({ type: 'PassRevoked', data: { passId: 1, publicId: 'gst_00000001', orgId: 1, facilityId: 10, qrHash: 'hash-1' } });
    return log;
  };

  it('counts passes per inviting user and month of their guest-invites stream', () => {
    expect(visible(feed(inviteAllowanceUsageProjection, history().events))).to.deep.equal({
      '100:2025-03': { usage_key: '100:2025-03', user_id: 100, month: '2025-03', used: 3 },
      '100:2025-04': { usage_key: '100:2025-04', user_id: 100, month: '2025-04', used: 1 },
      '200:2025-03': { usage_key: '200:2025-03', user_id: 200, month: '2025-03', used: 1 },
    });
  });

  it('falls back to the month the pass was created in for another stream', () => {
    const log = new EventLog();
    log.add(passCreated(1, { createdBy: 7 }), { stream: 'elsewhere', occurredAt: '2025-12-31T23:59:59.000Z' });
    expect(Object.keys(visible(feed(inviteAllowanceUsageProjection, log.events)))).to.deep.equal(['7:2025-12']);
  });

  it('keeps the counters exact when events are delivered again', () => {
    const log = history();
    const once = snapshot(feed(inviteAllowanceUsageProjection, log.events));
    expect(visible(feed(inviteAllowanceUsageProjection, log.events, snapshot(once)))).to.deep.equal(visible(once));
    expect(visible(feedOneByOne(inviteAllowanceUsageProjection, [...log.events, ...log.events]))).to.deep.equal(visible(once));
    expect(visible(feed(inviteAllowanceUsageProjection, [...log.events, ...log.events]))).to.deep.equal(visible(once));
  });
});
