// Use case: deactivate a facility (CLI `facility deactivate`).
// Takes the facility out of service for good: no new invites, no resuming. Deactivating
// twice is a no-op (facility-decider.ts).
import type { CommandDeps } from '../command-deps.js';
import type { CommandContext } from '../../shared/event-store/command-handler.js';
import type { Position } from '../../shared/event-store/event-store.js';
import { streams } from '../../shared/domain/events.js';
import { facilityDecider } from '../../shared/domain/facility-decider.js';

export interface DeactivateFacilityInput {
  readonly facilityId: number;
  /** When given, a facility of another organization is 404. */
  readonly orgId?: number;
}

export async function deactivateFacility(
  deps: CommandDeps,
  { facilityId, orgId }: DeactivateFacilityInput,
  ctx: CommandContext,
): Promise<{ changed: boolean; position: Position }> {
  const result = await deps.handler.handle(
    streams.facility(facilityId),
    facilityDecider,
    { type: 'DeactivateFacility', data: { facilityId, orgId } },
    ctx,
  );
  const changed = result.events.length > 0;
  if (changed) await deps.watermark.waitFor(result.position, deps.projectionWaitMs);
  return { changed, position: result.position };
}
