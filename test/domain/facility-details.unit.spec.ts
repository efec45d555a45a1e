// A facility's name, description and IANA time zone (UTC until set).
import { expect } from 'chai';
import { facilityDecider, type FacilityCommand } from '../../shared/domain/facility-decider.js';
import type { DomainEvent } from '../../shared/domain/events.js';
import { ConflictError, NotFoundError, ValidationError } from '../../shared/errors.js';
import { canonicalTimeZone, wallClock, zonedInstant } from '../../shared/domain/time-zone.js';
import { deciderSpec } from '../support/given-when-then.js';

const spec = deciderSpec(facilityDecider);
const added: DomainEvent = { type: 'FacilityAdded', data: { facilityId: 10, orgId: 1, name: 'HQ', description: null } };
const change = (data: Partial<Extract<FacilityCommand, { type: 'ChangeFacilityDetails' }>['data']> = {}): FacilityCommand => ({
  type: 'ChangeFacilityDetails',
  data: { facilityId: 10, orgId: 1, name: 'HQ', description: null, timeZone: 'Europe/Berlin', ...data },
});

describe('facility decider: details and time zone', () => {
  it('an add with a zone records the zone in the same append; UTC records nothing more', () => {
    spec
      .given([])
      .when({ type: 'AddFacility', data: { facilityId: 10, orgId: 1, name: 'HQ', timeZone: 'europe/berlin' } })
      .then([added, { type: 'FacilityDetailsChanged', data: { facilityId: 10, orgId: 1, name: 'HQ', description: null, timeZone: 'Europe/Berlin' } }]);
    spec.given([]).when({ type: 'AddFacility', data: { facilityId: 10, orgId: 1, name: 'HQ', timeZone: 'UTC' } }).then([added]);
  });

  it('renames, describes and sets the zone; the same details again record nothing', () => {
    const changed = { type: 'FacilityDetailsChanged', data: { facilityId: 10, orgId: 1, name: 'Head office', description: 'Front door', timeZone: 'Europe/Berlin' } } as const;
    spec.given([added]).when(change({ name: ' Head office ', description: 'Front door' })).then([changed]);
    spec.given([added, changed]).when(change({ name: 'Head office', description: 'Front door' })).then([]);
    spec.given([added]).when(change({ timeZone: null })).then([]);
  });

  it('refuses an unknown zone, an empty name, another organization (404) and a deactivated facility (409)', () => {
    spec.given([added]).when(change({ timeZone: 'Mars/Olympus_Mons' })).thenThrows(ValidationError);
    spec.given([added]).when(change({ name: ' ' })).thenThrows(ValidationError);
    spec.given([added]).when(change({ orgId: 2 })).thenThrows(NotFoundError);
    spec.given([added, { type: 'FacilityDeactivated', data: { facilityId: 10, orgId: 1 } }]).when(change()).thenThrows(ConflictError);
  });

  it('time zone helpers: canonical names, and wall clock to instant and back across a clock change', () => {
    expect(canonicalTimeZone('america/new_york')).to.equal('America/New_York');
    expect(canonicalTimeZone('Not/AZone')).to.equal(null);
    expect(canonicalTimeZone('Europe/Berlin; DROP')).to.equal(null);
    expect(zonedInstant('Europe/Berlin', '2026-07-01').toISOString()).to.equal('2026-06-30T22:00:00.000Z');
    expect(zonedInstant('Europe/Berlin', '2026-01-15', '09:30').toISOString()).to.equal('2026-01-15T08:30:00.000Z');
    expect(zonedInstant('America/New_York', '2026-03-08', '12:00').toISOString()).to.equal('2026-03-08T16:00:00.000Z');
    expect(wallClock('Asia/Kolkata', new Date('2026-01-15T20:00:00Z'))).to.deep.equal({ date: '2026-01-16', time: '01:30' });
  });
});
