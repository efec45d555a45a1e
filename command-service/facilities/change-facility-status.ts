// Use cases: suspend, resume and deactivate a facility (CLI `facility suspend|resume|deactivate`).
// * suspend pauses new invites; existing passes keep working. Suspending a suspended facility is
//   a no-op, a deactivated one is 409.
// * resume lets the facility take new invites again. Resuming an active facility is a no-op, a
//   deactivated one is 409.
// * deactivate takes the facility out of service for good: no new invites, no resuming.
//   Deactivating twice is a no-op.
// The rules are the facility decider's (facility-decider.ts); this only runs the command.
import type { CommandDeps } from '../command-deps.js';
import type { CommandContext } from '../../shared/event-store/command-handler.js';
import type { Position } from '../../shared/event-store/event-store.js';
import { streams } from '../../shared/domain/events.js';
import { facilityDecider } from '../../shared/domain/facility-decider.js';
import { READ_MODELS } from '../../shared/db/read-models.js';

export interface FacilityStatusInput {
  readonly facilityId: number;
  /** When given, a facility of another organization is 404. */
  readonly orgId?: number;
}

export interface FacilityStatusResult {
  /** False when the facility already was in that state (nothing was recorded). */
  readonly changed: boolean;
  readonly position: Position;
}

type StatusCommand = 'SuspendFacility' | 'ResumeFacility' | 'DeactivateFacility';

async function changeFacilityStatus(
  type: StatusCommand,
  deps: CommandDeps,
  { facilityId, orgId }: FacilityStatusInput,
  ctx: CommandContext,
): Promise<FacilityStatusResult> {
  const result = await deps.handler.handle(streams.facility(facilityId), facilityDecider, { type, data: { facilityId, orgId } }, ctx);
  const changed = result.events.length > 0;
  if (changed) await deps.watermark.waitFor(result.position, deps.projectionWaitMs, [READ_MODELS.facilities]);
  return { changed, position: result.position };
}

export const suspendFacility = (deps: CommandDeps, input: FacilityStatusInput, ctx: CommandContext) =>
  changeFacilityStatus('SuspendFacility', deps, input, ctx);
export const resumeFacility = (deps: CommandDeps, input: FacilityStatusInput, ctx: CommandContext) =>
  changeFacilityStatus('ResumeFacility', deps, input, ctx);
export const deactivateFacility = (deps: CommandDeps, input: FacilityStatusInput, ctx: CommandContext) =>
  changeFacilityStatus('DeactivateFacility', deps, input, ctx);
