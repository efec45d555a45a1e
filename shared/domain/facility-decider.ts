// A facility of an organization: the place a pass opens. Lifecycle:
//
//   active ──suspend──> suspended ──resume──> active        (suspension pauses new invites)
//   active | suspended ──deactivate──> deactivated          (terminal)
//
// Conflicts, chosen so operator commands are safe to retry:
// * suspending a suspended, resuming an active, or deactivating a deactivated facility is a no-op
//   (no event; the facility already is what was asked);
// * suspending or resuming a deactivated facility is 409: deactivation is final, and silently
//   accepting would suggest the facility could take invites again.
// A command naming an organization that does not own the facility gets 404, as if it did not exist.
import type { Decider } from './decider.js';
import type { FacilityAdded, FacilityDeactivated, FacilityResumed, FacilitySuspended } from './events.js';
import { ConflictError, NotFoundError, ValidationError } from '../errors.js';

export const MAX_FACILITY_NAME_LENGTH = 200;
export const MAX_FACILITY_DESCRIPTION_LENGTH = 2000;

export type FacilityEvent = FacilityAdded | FacilitySuspended | FacilityResumed | FacilityDeactivated;

interface FacilityRef {
  facilityId: number;
  /** When given, the facility must belong to this organization (else 404). */
  orgId?: number;
}

export type FacilityCommand =
  | { type: 'AddFacility'; data: { facilityId: number; orgId: number; name: string; description?: string | null } }
  | { type: 'SuspendFacility'; data: FacilityRef }
  | { type: 'ResumeFacility'; data: FacilityRef }
  | { type: 'DeactivateFacility'; data: FacilityRef };

interface FacilityFacts {
  facilityId: number;
  orgId: number;
  name: string;
  description: string | null;
}

export type FacilityState =
  | { status: 'absent' }
  | ({ status: 'active' } & FacilityFacts)
  | ({ status: 'suspended' } & FacilityFacts)
  | ({ status: 'deactivated' } & FacilityFacts);

export type ExistingFacility = Exclude<FacilityState, { status: 'absent' }>;

/**
 * The facility as a caller of `orgId` may see it: 404 when absent or another organization's.
 * Used by every command that touches a facility, including pass creation.
 */
export function facilityInOrg(state: FacilityState, facilityId: number, orgId: number | undefined): ExistingFacility {
  if (state.status === 'absent' || (orgId !== undefined && state.orgId !== orgId)) {
    throw new NotFoundError(`facility ${facilityId} not found`);
  }
  return state;
}

/** Pass creation needs an active facility: 404 as above, 409 when deactivated or suspended. */
export function assertFacilityAcceptsPasses(state: FacilityState, facilityId: number, orgId: number): void {
  const facility = facilityInOrg(state, facilityId, orgId);
  if (facility.status === 'deactivated') throw new ConflictError(`facility ${facilityId} is deactivated`);
  if (facility.status === 'suspended') throw new ConflictError(`facility ${facilityId} is suspended`);
}

export const facilityDecider: Decider<FacilityCommand, FacilityEvent, FacilityState> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    switch (event.type) {
      case 'FacilityAdded':
        return {
          status: 'active',
          facilityId: event.data.facilityId,
          orgId: event.data.orgId,
          name: event.data.name,
          description: event.data.description,
        };
      case 'FacilitySuspended':
        return state.status === 'absent' ? state : { ...state, status: 'suspended' };
      case 'FacilityResumed':
        return state.status === 'absent' ? state : { ...state, status: 'active' };
      case 'FacilityDeactivated':
        return state.status === 'absent' ? state : { ...state, status: 'deactivated' };
      default:
        // A type this build does not fold (written by newer code) leaves the state as it is.
        return state;
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'AddFacility': {
        const { facilityId, orgId } = command.data;
        if (state.status !== 'absent') throw new ConflictError(`facility ${facilityId} already exists`);
        const name = command.data.name.trim();
        if (name.length === 0 || name.length > MAX_FACILITY_NAME_LENGTH) {
          throw new ValidationError(`facility name must be 1 to ${MAX_FACILITY_NAME_LENGTH} characters`);
        }
        const description = command.data.description?.trim() || null;
        if (description !== null && description.length > MAX_FACILITY_DESCRIPTION_LENGTH) {
          throw new ValidationError(`facility description must be at most ${MAX_FACILITY_DESCRIPTION_LENGTH} characters`);
        }
        return [{ type: 'FacilityAdded', data: { facilityId, orgId, name, description } }];
      }
      case 'SuspendFacility': {
        const facility = facilityInOrg(state, command.data.facilityId, command.data.orgId);
        if (facility.status === 'deactivated') throw new ConflictError(`facility ${facility.facilityId} is deactivated`);
        if (facility.status === 'suspended') return [];
        return [{ type: 'FacilitySuspended', data: { facilityId: facility.facilityId, orgId: facility.orgId } }];
      }
      case 'ResumeFacility': {
        const facility = facilityInOrg(state, command.data.facilityId, command.data.orgId);
        if (facility.status === 'deactivated') throw new ConflictError(`facility ${facility.facilityId} is deactivated`);
        if (facility.status === 'active') return [];
        return [{ type: 'FacilityResumed', data: { facilityId: facility.facilityId, orgId: facility.orgId } }];
      }
      case 'DeactivateFacility': {
        const facility = facilityInOrg(state, command.data.facilityId, command.data.orgId);
        if (facility.status === 'deactivated') return [];
        return [{ type: 'FacilityDeactivated', data: { facilityId: facility.facilityId, orgId: facility.orgId } }];
      }
    }
  },
};
