import { expect } from 'chai';
import { facilitiesProjection } from '../../projections/facilities-projection.js';
import { EventLog, feed, feedOneByOne, snapshot, visible } from './fixtures.js';

describe('facilities projection', () => {
  const history = () => {
    const log = new EventLog();
    const added = log.add({ type: 'FacilityAdded', data: { facilityId: 10, orgId: 1, name: 'HQ', description: 'Main door' } });
    log.add({ type: 'FacilityAdded', data: { facilityId: 11, orgId: 1, name: 'Annex', description: null } });
    log.add({ type: 'FacilitySuspended', data: { facilityId: 10, orgId: 1 } });
    log.add({ type: 'FacilityResumed', data: { facilityId: 10, orgId: 1 } });
    log.add({ type: 'FacilitySuspended', data: { facilityId: 10, orgId: 1 } });
    log.add({ type: 'FacilityDeactivated', data: { facilityId: 11, orgId: 1 } });
    log.add({ type: 'FacilityDetailsChanged', data: { facilityId: 10, orgId: 1, name: 'Headquarters', description: 'Main door', timeZone: 'Europe/Berlin' } });
    return { log, added };
  };

  it('follows adds, detail changes (name, time zone), suspensions, resumptions and deactivations', () => {
    const { log, added } = history();
    expect(visible(feed(facilitiesProjection, log.events))).to.deep.equal({
      '10': {
        facility_id: 10,
        org_id: 1,
        name: 'Headquarters',
        description: 'Main door',
        is_active: true,
        suspended: true,
        time_zone: 'Europe/Berlin',
        created_at: new Date(added.metadata.occurredAt),
      },
      '11': {
        facility_id: 11,
        org_id: 1,
        name: 'Annex',
        description: null,
        is_active: false,
        suspended: false,
        time_zone: 'UTC',
        created_at: new Date(log.events[1]!.metadata.occurredAt),
      },
    });
  });

  it('ignores changes to an unknown facility', () => {
    const log = new EventLog();
    log.add({ type: 'FacilitySuspended', data: { facilityId: 5, orgId: 1 } });
    expect(feed(facilitiesProjection, log.events).size).to.equal(0);
  });

  it('is idempotent when the same events are fed twice', () => {
    const { log } = history();
    const once = snapshot(feed(facilitiesProjection, log.events));
    expect(visible(feed(facilitiesProjection, log.events, snapshot(once)))).to.deep.equal(visible(once));
    // Replaying the suspend/resume history again must not flip the flag back and forth.
    expect(visible(feedOneByOne(facilitiesProjection, [...log.events, ...log.events]))).to.deep.equal(visible(once));
  });
});
