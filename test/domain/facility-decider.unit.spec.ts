import { expect } from 'chai';
import {
  assertFacilityAcceptsPasses,
  facilityDecider,
  type FacilityCommand,
  type FacilityEvent,
} from '../../shared/domain/facility-decider.js';
import { fold } from '../../shared/domain/decider.js';
import { ConflictError, NotFoundError, ValidationError } from '../../shared/errors.js';
import { deciderSpec } from '../support/given-when-then.js';

const spec = deciderSpec(facilityDecider);
const ref = { facilityId: 10, orgId: 1 };
const added: FacilityEvent = { type: 'FacilityAdded', data: { facilityId: 10, orgId: 1, name: 'HQ', description: 'Main door' } };
const suspended: FacilityEvent = { type: 'FacilitySuspended', data: ref };
const resumed: FacilityEvent = { type: 'FacilityResumed', data: ref };
const deactivated: FacilityEvent = { type: 'FacilityDeactivated', data: ref };
const suspend: FacilityCommand = { type: 'SuspendFacility', data: { facilityId: 10 } };
const resume: FacilityCommand = { type: 'ResumeFacility', data: { facilityId: 10 } };
const deactivate: FacilityCommand = { type: 'DeactivateFacility', data: { facilityId: 10 } };

describe('facility decider', () => {
  describe('AddFacility', () => {
    it('adds an active facility, trimming name and description', () => {
      spec
        .given([])
        .when({ type: 'AddFacility', data: { facilityId: 10, orgId: 1, name: ' HQ ', description: ' Main door ' } })
        .then([added]);
    });

    it('stores a blank description as null', () => {
      spec
        .given([])
        .when({ type: 'AddFacility', data: { facilityId: 10, orgId: 1, name: 'HQ', description: '  ' } })
        .then([{ type: 'FacilityAdded', data: { facilityId: 10, orgId: 1, name: 'HQ', description: null } }]);
    });

    it('refuses a second add and a blank name', () => {
      spec.given([added]).when({ type: 'AddFacility', data: { facilityId: 10, orgId: 1, name: 'HQ' } }).thenThrows(ConflictError);
      spec.given([]).when({ type: 'AddFacility', data: { facilityId: 10, orgId: 1, name: ' ' } }).thenThrows(ValidationError);
    });
  });

  describe('SuspendFacility', () => {
    it('suspends an active facility', () => spec.given([added]).when(suspend).then([suspended]));
    it('is a no-op on a suspended facility', () => spec.given([added, suspended]).when(suspend).thenNothing());
    it('is 409 on a deactivated facility', () => {
      spec.given([added, deactivated]).when(suspend).thenThrows(ConflictError, /deactivated/);
    });
    it('is 404 for an unknown facility', () => spec.given([]).when(suspend).thenThrows(NotFoundError));
    it('is 404 for another organization', () => {
      spec.given([added]).when({ type: 'SuspendFacility', data: { facilityId: 10, orgId: 2 } }).thenThrows(NotFoundError);
    });
  });

  describe('ResumeFacility', () => {
    it('resumes a suspended facility', () => spec.given([added, suspended]).when(resume).then([resumed]));
    it('is a no-op on an active facility', () => spec.given([added, suspended, resumed]).when(resume).thenNothing());
    it('is 409 on a deactivated facility', () => spec.given([added, suspended, deactivated]).when(resume).thenThrows(ConflictError));
    it('is 404 for an unknown facility', () => spec.given([]).when(resume).thenThrows(NotFoundError));
  });

  describe('DeactivateFacility', () => {
    it('deactivates an active facility', () => spec.given([added]).when(deactivate).then([deactivated]));
    it('deactivates a suspended facility', () => spec.given([added, suspended]).when(deactivate).then([deactivated]));
    it('is a no-op on a deactivated facility', () => spec.given([added, deactivated]).when(deactivate).thenNothing());
    it('is 404 for another organization', () => {
      spec.given([added]).when({ type: 'DeactivateFacility', data: { facilityId: 10, orgId: 2 } }).thenThrows(NotFoundError);
    });
  });

  describe('assertFacilityAcceptsPasses', () => {
    const check = (events: FacilityEvent[], orgId = 1) => () => assertFacilityAcceptsPasses(fold(facilityDecider, events), 10, orgId);
    it('accepts an active facility of the organization', () => expect(check([added])).not.to.throw());
    it('accepts a resumed facility', () => expect(check([added, suspended, resumed])).not.to.throw());
    it('is 404 when absent or another organization', () => {
      expect(check([])).to.throw(NotFoundError);
      expect(check([added], 2)).to.throw(NotFoundError);
    });
    it('is 409 when suspended or deactivated', () => {
      expect(check([added, suspended])).to.throw(ConflictError, /suspended/);
      expect(check([added, deactivated])).to.throw(ConflictError, /deactivated/);
    });
  });
});
