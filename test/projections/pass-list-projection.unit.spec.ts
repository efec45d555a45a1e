import { expect } from 'chai';
import { passListProjection } from '../../projections/pass-list-projection.js';
import { EventLog, feed, feedOneByOne, guest, passCreated, snapshot, visible } from './fixtures.js';

describe('pass_list projection', () => {
  it('adds an expected pass with the guest details and lower-cased search text', () => {
    const log = new EventLog();
    const created = log.add(passCreated(7, { createdBy: 100 }), { stream: 'guest-invites-100-2025-03' });
    const rows = visible(feed(passListProjection, log.events));
    expect(rows).to.deep.equal({
      '7': {
        pass_id: 7,
        public_id: 'gst_00000007',
        org_id: 1,
        facility_id: 10,
        created_by: 100,
        batch_id: 'batch-7',
        stream_name: 'guest-invites-100-2025-03',
        status: 'expected',
        first_name: 'Ada',
        last_name: 'Lovelace',
        email: 'Ada@Example.org',
        phone: '+441234567890',
        arrival_date: '2025-03-02',
        arrival_time: '09:30',
        // The events' own text, as written to the timestamptz columns.
        valid_from: '2025-03-02T09:30:00.000Z',
        valid_until: '2025-03-02T23:59:59.999Z',
        qr_hash: 'hash-7',
        created_at: created.metadata.occurredAt,
        search_text: 'ada lovelace ada@example.org +441234567890',
      },
    });
  });

  it('keeps no names or contact when the guest key was destroyed', () => {
    const log = new EventLog();
    log.add(passCreated(8, { guest: null }));
    const row = visible(feed(passListProjection, log.events))['8']!;
    expect(row).to.include({ first_name: null, last_name: null, email: null, phone: null, search_text: '', status: 'expected' });
  });

  it('leaves absent optional guest fields out of the search text', () => {
    const log = new EventLog();
    log.add(passCreated(9, { guest: guest({ lastName: null, email: null, phone: '555 0101' }) }));
    expect(visible(feed(passListProjection, log.events))['9']!.search_text).to.equal('ada 555 0101');
  });

  it('cancels a revoked pass and ignores a revocation of an unknown pass', () => {
    const log = new EventLog();
    log.add(passCreated(1));
    log.add(passCreated(2));
    log.add({ type: 'PassRevoked', data: { passId: 1, publicId: 'gst_00000001', orgId: 1, facilityId: 10, qrHash: 'hash-1' } });
    log.add({ type: 'PassRevoked', data: { passId: 99, publicId: 'gst_0000002r', orgId: 1, facilityId: 10, qrHash: 'x' } });
    const rows = visible(feed(passListProjection, log.events));
    expect(Object.keys(rows)).to.deep.equal(['1', '2']);
    expect(rows['1']!.status).to.equal('cancelled');
    expect(rows['2']!.status).to.equal('expected');
  });

  it('moves an active pass to checked_in on its first granted entry, but never a cancelled one', () => {
    const checkIn = (passId: number) => ({
      type: 'PassCheckedIn' as const,
      data: { passId, publicId: `gst_0000000${passId}`, orgId: 1, facilityId: 10, accessId: '0b9c7a52-8c0e-4f57-9d0b-51b0c3e2f1a4', controllerId: 'c1', door: 'main', checkedInAt: '2026-12-01T09:00:00.000Z' },
    });
    const log = new EventLog();
    log.add(passCreated(1));
    log.add(passCreated(2));
    log.add({ type: 'PassRevoked', data: { passId: 2, publicId: 'gst_00000002', orgId: 1, facilityId: 10, qrHash: 'hash-2' } });
    log.add(checkIn(1));
    log.add(checkIn(2));
    const rows = visible(feed(passListProjection, log.events));
    expect(rows['1']!.status).to.equal('checked_in');
    expect(rows['2']!.status).to.equal('cancelled');
  });

  it('ignores events it does not handle', () => {
    const log = new EventLog();
    log.add({ type: 'FacilityAdded', data: { facilityId: 10, orgId: 1, name: 'HQ', description: null } });
    expect(feed(passListProjection, log.events).size).to.equal(0);
  });

  it('is idempotent: the same events fed twice, in one batch or event by event, give the same rows', () => {
    const log = new EventLog();
    log.add(passCreated(1));
    log.add(passCreated(2));
    log.add({ type: 'PassRevoked', data: { passId: 2, publicId: 'gst_00000002', orgId: 1, facilityId: 10, qrHash: 'hash-2' } });
    const once = snapshot(feed(passListProjection, log.events));
    const twice = feed(passListProjection, log.events, snapshot(once));
    expect(visible(twice)).to.deep.equal(visible(once));
    expect([...twice.values()].map((r) => [r._commit, r._prepare])).to.deep.equal([...once.values()].map((r) => [r._commit, r._prepare]));
    expect(visible(feedOneByOne(passListProjection, [...log.events, ...log.events]))).to.deep.equal(visible(once));
    expect(visible(feed(passListProjection, [...log.events, ...log.events]))).to.deep.equal(visible(once));
  });
});
