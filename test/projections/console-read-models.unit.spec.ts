// The console's read models, fed events as the runner feeds them: front_desk_visits (a guest
// expected, checked in, checked out; a revoked pass; a replay changes nothing) and audit_log (one
// row per event of an organization, ids only, its kind and subject; door scans left out).
import { expect } from 'chai';
import { frontDeskVisitsProjection } from '../../projections/front-desk-visits-projection.js';
import { auditKindOf, auditLogProjection } from '../../projections/audit-log-projection.js';
import { EventLog, feed, feedOneByOne, passCreated, snapshot, visible } from './fixtures.js';

const checkedIn = (passId: number, at: string) => ({
  type: 'PassCheckedIn' as const,
  data: { passId, publicId: `gst_${passId.toString(36).padStart(8, '0')}`, orgId: 1, facilityId: 10, accessId: `in-${passId}`, controllerId: 'c1', door: 'Main', checkedInAt: at },
});
const checkedOut = (passId: number, at: string) => ({
  type: 'PassCheckedOut' as const,
  data: { passId, publicId: `gst_${passId.toString(36).padStart(8, '0')}`, orgId: 1, facilityId: 10, accessId: `out-${passId}`, controllerId: 'c1', door: 'Main', checkedOutAt: at },
});

describe('front_desk_visits projection', () => {
  it('follows a guest from expected to on site to left, with the door times', () => {
    const log = new EventLog();
    log.add(passCreated(7));
    const expected = visible(feed(frontDeskVisitsProjection, log.events))['7']!;
    expect(expected).to.include({ facility_id: 10, arrival_date: '2025-03-02', arrival_time: '09:30', first_name: 'Ada', last_name: 'Lovelace', cancelled: false, checked_in_at: null, checked_out_at: null });
    log.add(checkedIn(7, '2025-03-02T09:41:00.000Z'));
    log.add(checkedIn(7, '2025-03-02T09:50:00.000Z')); // a later entry changes nothing
    log.add(checkedOut(7, '2025-03-02T17:02:00.000Z'));
    const left = visible(feed(frontDeskVisitsProjection, log.events))['7']!;
    expect(left).to.include({ checked_in_at: '2025-03-02T09:41:00.000Z', checked_out_at: '2025-03-02T17:02:00.000Z' });
  });

  it('marks a revoked pass, keeps no name once the guest key is gone, and is the same fed twice or one by one', () => {
    const log = new EventLog();
    log.add(passCreated(8, { guest: null }));
    log.add({ type: 'PassRevoked', data: { passId: 8, publicId: 'gst_00000008', orgId: 1 } } as never);
    const once = feed(frontDeskVisitsProjection, log.events);
    expect(visible(once)['8']).to.include({ cancelled: true, first_name: null, last_name: null });
    const twice = feed(frontDeskVisitsProjection, log.events, snapshot(once));
    expect(visible(twice)).to.deep.equal(visible(once));
    expect(visible(feedOneByOne(frontDeskVisitsProjection, log.events))).to.deep.equal(visible(once));
  });
});

describe('audit_log projection', () => {
  it('keeps one row per organization event, by id, with its kind, actor and subject, and no personal data', () => {
    const log = new EventLog();
    const created = log.add(passCreated(9, { orgId: 4 }));
    const rows = visible(feed(auditLogProjection, log.events));
    const row = rows[created.id]!;
    expect(row).to.include({ org_id: 4, event_type: 'PassCreated', kind: 'passes', actor_kind: 'operator', subject_type: 'pass', subject_id: 'gst_00000009' });
    expect(JSON.stringify(row)).to.not.include('Ada');
    expect(JSON.stringify(row)).to.not.include('Example.org');
    expect(visible(feed(auditLogProjection, log.events, snapshot(feed(auditLogProjection, log.events))))).to.deep.equal(rows);
  });

  it('names the kinds an admin filters by, and leaves door scans out', () => {
    expect(auditKindOf('MemberErased')).to.equal('members');
    expect(auditKindOf('MemberEmailClaimed')).to.equal('people');
    expect(auditKindOf('PassCheckedIn')).to.equal('visits');
    expect(auditKindOf('PassDeliverySucceeded')).to.equal('delivery');
    expect(auditKindOf('PassMessageResendRequested')).to.equal('delivery');
    expect(auditKindOf('ApiKeyCreated')).to.equal('api_keys');
    expect(auditKindOf('DoorAccessRecorded')).to.equal(null);
    expect(auditKindOf('TokenFamilyStarted')).to.equal(null);
    expect(auditLogProjection.handles).to.not.include('DoorAccessRecorded');
  });
});
