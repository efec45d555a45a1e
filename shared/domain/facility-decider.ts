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
//
// Its name, description and IANA time zone (UTC until set) can change while it is not
// deactivated (FacilityDetailsChanged); changing them to what they are records nothing.
import type { Decider } from './decider.js';
import type { FacilityAdded, FacilityDeactivated, FacilityDetailsChanged, FacilityResumed, FacilitySuspended } from './events.js';
import { DEFAULT_TIME_ZONE, canonicalTimeZone } from './time-zone.js';
import { ConflictError, NotFoundError, ValidationError } from '../errors.js';

export const MAX_FACILITY_NAME_LENGTH = 200;
export const MAX_FACILITY_DESCRIPTION_LENGTH = 2000;

export type FacilityEvent = FacilityAdded | FacilityDetailsChanged | FacilitySuspended | FacilityResumed | FacilityDeactivated;

interface FacilityRef {
  facilityId: number;
  /** When given, the facility must belong to this organization (else 404). */
  orgId?: number;
}

export type FacilityCommand =
  | { type: 'AddFacility'; data: { facilityId: number; orgId: number; name: string; description?: string | null; timeZone?: string | null } }
  | { type: 'ChangeFacilityDetails'; data: FacilityRef & { name: string; description: string | null; timeZone: string | null } }
  | { type: 'SuspendFacility'; data: FacilityRef }
  | { type: 'ResumeFacility'; data: FacilityRef }
  | { type: 'DeactivateFacility'; data: FacilityRef };

interface FacilityFacts {
  facilityId: number;
  orgId: number;
  name: string;
  description: string | null;
  /** IANA name; UTC until set. */
  timeZone: string;
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

function facilityText(rawName: string, rawDescription: string | null): { name: string; description: string | null } {
  const name = rawName.trim();
  if (name.length === 0 || name.length > MAX_FACILITY_NAME_LENGTH) {
    throw new ValidationError(`facility name must be 1 to ${MAX_FACILITY_NAME_LENGTH} characters`);
  }
  const description = rawDescription?.trim() || null;
  if (description !== null && description.length > MAX_FACILITY_DESCRIPTION_LENGTH) {
    throw new ValidationError(`facility description must be at most ${MAX_FACILITY_DESCRIPTION_LENGTH} characters`);
  }
  return { name, description };
}

function timeZoneOf(name: string): string {
  const zone = canonicalTimeZone(name);
  if (zone === null) throw new ValidationError(`"${name.slice(0, 64)}" is not an IANA time zone (such as Europe/Berlin or America/New_York)`);
  return zone;
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
          timeZone: DEFAULT_TIME_ZONE,
        };
      case 'FacilityDetailsChanged':
        return state.status === 'absent' ? state : { ...state, name: event.data.name, description: event.data.description, timeZone: event.data.timeZone };
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
        const { name, description } = facilityText(command.data.name, command.data.description ?? null);
        const events: FacilityEvent[] = [{ type: 'FacilityAdded', data: { facilityId, orgId, name, description } }];
        const timeZone = command.data.timeZone ?? null;
        // A zone given at once is one more fact of the same append: the facility never exists without it.
        if (timeZone !== null && timeZoneOf(timeZone) !== DEFAULT_TIME_ZONE) {
          events.push({ type: 'FacilityDetailsChanged', data: { facilityId, orgId, name, description, timeZone: timeZoneOf(timeZone) } });
        }
        return events;
      }
      case 'ChangeFacilityDetails': {
        const facility = facilityInOrg(state, command.data.facilityId, command.data.orgId);
        if (facility.status === 'deactivated') throw new ConflictError(`facility ${facility.facilityId} is deactivated`);
        const { name, description } = facilityText(command.data.name, command.data.description);
        const timeZone = command.data.timeZone === null ? DEFAULT_TIME_ZONE : timeZoneOf(command.data.timeZone);
        if (name === facility.name && description === facility.description && timeZone === facility.timeZone) return [];
        return [{ type: 'FacilityDetailsChanged', data: { facilityId: facility.facilityId, orgId: facility.orgId, name, description, timeZone } }];
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
