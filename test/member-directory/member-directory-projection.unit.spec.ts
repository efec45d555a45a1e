import { expect } from 'chai';
import { memberCountsProjection, memberDirectoryProjection } from '../../projections/member-directory-projection.js';
import type { OpenedMemberContact } from '../../projections/projection.js';
import { EventLog, feed, feedOneByOne, snapshot, visible } from '../projections/fixtures.js';

const ID = 'emp_' + 'a'.repeat(32);
const OTHER = 'emp_' + 'b'.repeat(32);
const sealedContact: OpenedMemberContact = {
  sealed: { keyId: 'k-contact', iv: 'AAAAAAAAAAAAAAAA', ciphertext: 'c2VhbGVk', tag: 'AAAAAAAAAAAAAAAAAAAAAA' },
  emailHash: 'email-hash',
  phoneHash: 'phone-hash',
};

function joined(memberId = ID, o: { name?: { firstName: string; lastName: string } | null; contact?: OpenedMemberContact | null; orgId?: number } = {}) {
  return {
    type: 'MemberJoined' as const,
    data: {
      memberId,
      orgId: o.orgId ?? 1,
      userId: 42,
      name: o.name === undefined ? { firstName: 'Ada', lastName: 'Lovelace' } : o.name,
      contact: o.contact === undefined ? sealedContact : o.contact,
      jobTitle: 'Engineer',
      department: 'R&D',
      externalId: 'HR-1',
    },
  };
}
const changed = (memberId = ID) => ({
  type: 'MemberProfileChanged' as const,
  data: { ...joined(memberId).data, userId: undefined, name: { firstName: 'Ada', lastName: 'King' }, contact: null, jobTitle: 'Countess', department: null, externalId: null },
});
const deactivated = (memberId = ID) => ({ type: 'MemberDeactivated' as const, data: { memberId, orgId: 1 } });
const reactivated = (memberId = ID) => ({ type: 'MemberReactivated' as const, data: { memberId, orgId: 1 } });
const erased = (includeName: boolean, memberId = ID) => ({ type: 'MemberErased' as const, data: { memberId, orgId: 1, includeName } });

function profileChanged(memberId = ID) {
  const { userId: _u, ...data } = changed(memberId).data;
  return { type: 'MemberProfileChanged' as const, data };
}

describe('member_directory projection', () => {
  it('adds an active member with the sealed contact and its hashes, never the contact in plaintext', () => {
    const log = new EventLog();
    const event = log.add(joined(), { stream: `member-${ID}` });
    expect(visible(feed(memberDirectoryProjection, log.events))).to.deep.equal({
      [ID]: {
        member_id: ID,
        org_id: 1,
        user_id: 42,
        first_name: 'Ada',
        last_name: 'Lovelace',
        name: 'Ada Lovelace',
        job_title: 'Engineer',
        department: 'R&D',
        external_id: 'HR-1',
        status: 'active',
        created_at: event.metadata.occurredAt,
        contact: sealedContact.sealed,
        email_hash: 'email-hash',
        phone_hash: 'phone-hash',
      },
    });
  });

  it('applies the whole profile of a change, keeping status, creation time and user', () => {
    const log = new EventLog();
    const first = log.add(joined());
    log.add(deactivated());
    log.add(profileChanged());
    const row = visible(feed(memberDirectoryProjection, log.events))[ID]!;
    expect(row).to.include({ name: 'Ada King', last_name: 'King', job_title: 'Countess', department: null, external_id: null, status: 'inactive', user_id: 42 });
    expect(row).to.include({ contact: null, email_hash: null, phone_hash: null, created_at: first.metadata.occurredAt });
  });

  it('deactivates and reactivates', () => {
    const log = new EventLog();
    log.add(joined());
    log.add(deactivated());
    expect(visible(feed(memberDirectoryProjection, log.events))[ID]!.status).to.equal('inactive');
    log.add(reactivated());
    expect(visible(feed(memberDirectoryProjection, log.events))[ID]!.status).to.equal('active');
  });

  it('erases the contact and hashes, and the names too with includeName', () => {
    const log = new EventLog();
    log.add(joined());
    log.add(joined(OTHER));
    log.add(erased(false));
    log.add(erased(true, OTHER));
    const rows = visible(feed(memberDirectoryProjection, log.events));
    expect(rows[ID]).to.include({ name: 'Ada Lovelace', contact: null, email_hash: null, phone_hash: null });
    expect(rows[OTHER]).to.include({ first_name: '', last_name: '', name: '', contact: null, email_hash: null, phone_hash: null, status: 'active' });
  });

  it('rebuilds after an erasure: keys gone, the runner hands the events over with name and contact null', () => {
    const log = new EventLog();
    log.add(joined(ID, { name: null, contact: null }));
    log.add(erased(true));
    expect(visible(feed(memberDirectoryProjection, log.events))[ID]).to.include({ first_name: '', last_name: '', name: '', contact: null, email_hash: null });
  });

  it('gives the same rows fed twice, and fed one event at a time', () => {
    const log = new EventLog();
    log.add(joined());
    log.add(joined(OTHER));
    log.add(deactivated());
    log.add(profileChanged(OTHER));
    log.add(reactivated());
    log.add(erased(true, OTHER));
    const once = feed(memberDirectoryProjection, log.events);
    const before = snapshot(once);
    expect(visible(feed(memberDirectoryProjection, log.events, once))).to.deep.equal(visible(before));
    expect(visible(feedOneByOne(memberDirectoryProjection, log.events))).to.deep.equal(visible(before));
  });

  it('ignores events of unknown members and events it does not handle', () => {
    const log = new EventLog();
    log.add(deactivated());
    log.add(profileChanged());
    log.add(erased(true));
    log.add({ type: 'FacilityAdded', data: { facilityId: 10, orgId: 1, name: 'HQ', description: null } });
    expect(feed(memberDirectoryProjection, log.events).size).to.equal(0);
  });
});

describe('member_counts projection', () => {
  it('counts active and inactive members per organization, the same fed twice or one by one', () => {
    const log = new EventLog();
    log.add(joined());
    log.add(joined(OTHER));
    log.add(joined('emp_' + 'c'.repeat(32), { orgId: 2 }));
    log.add(deactivated());
    log.add(reactivated());
    log.add(deactivated(OTHER));
    const rows = feed(memberCountsProjection, log.events);
    expect(visible(rows)).to.deep.equal({ '1': { org_id: 1, active: 1, inactive: 1 }, '2': { org_id: 2, active: 1, inactive: 0 } });
    const before = snapshot(rows);
    expect(visible(feed(memberCountsProjection, log.events, rows))).to.deep.equal(visible(before));
    expect(visible(feedOneByOne(memberCountsProjection, log.events))).to.deep.equal(visible(before));
  });
});
