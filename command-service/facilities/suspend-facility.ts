// Use case: suspend a facility (CLI `facility suspend`).
// Pauses new invites at the facility; existing passes keep working. Suspending a suspended
// facility is a no-op, a deactivated one is 409 (facility-decider.ts).
import type { CommandDeps } from '../command-deps.js';
import type { CommandContext } from '../../shared/event-store/command-handler.js';
import type { Position } from '../../shared/event-store/event-store.js';
import { streams } from '../../shared/domain/events.js';
import { facilityDecider } from '../../shared/domain/facility-decider.js';

export interface SuspendFacilityInput {
  readonly facilityId: number;
  /** When given, a facility of another organization is 404. */
  readonly orgId?: number;
}

export async function suspendFacility(
  deps: CommandDeps,
  { facilityId, orgId }: SuspendFacilityInput,
  ctx: CommandContext,
): Promise<{ changed: boolean; position: Position }> {
  const result = await deps.handler.handle(
    streams.facility(facilityId),
    facilityDecider,
    { type: 'SuspendFacility', data: { facilityId, orgId } },
    ctx,
  );
  const changed = result.events.length > 0;
  if (changed) await deps.watermark.waitFor(result.position, deps.projectionWaitMs);
  return { changed, position: result.position };
}
