// Use case: resume a facility (CLI `facility resume`).
// Lets the facility take new invites again. Resuming an active facility is a no-op, a
// deactivated one is 409 (facility-decider.ts).
import type { CommandDeps } from '../command-deps.js';
import type { CommandContext } from '../../shared/event-store/command-handler.js';
import type { Position } from '../../shared/event-store/event-store.js';
import { streams } from '../../shared/domain/events.js';
import { facilityDecider } from '../../shared/domain/facility-decider.js';

export interface ResumeFacilityInput {
  readonly facilityId: number;
  /** When given, a facility of another organization is 404. */
  readonly orgId?: number;
}

export async function resumeFacility(
  deps: CommandDeps,
  { facilityId, orgId }: ResumeFacilityInput,
  ctx: CommandContext,
): Promise<{ changed: boolean; position: Position }> {
  const result = await deps.handler.handle(
    streams.facility(facilityId),
    facilityDecider,
    { type: 'ResumeFacility', data: { facilityId, orgId } },
    ctx,
  );
  const changed = result.events.length > 0;
  if (changed) await deps.watermark.waitFor(result.position, deps.projectionWaitMs);
  return { changed, position: result.position };
}
