// Use case: rename a facility, describe it, set its IANA time zone (the console's facility form).
// The rules are the facility decider's: a deactivated facility does not change, another
// organization's is 404, and the same details again record nothing.
import type { CommandDeps } from '../command-deps.js';
import type { CommandContext } from '../../shared/event-store/command-handler.js';
import { streams } from '../../shared/domain/events.js';
import { facilityDecider } from '../../shared/domain/facility-decider.js';
import { READ_MODELS } from '../../shared/db/read-models.js';

export interface FacilityDetailsInput {
  readonly facilityId: number;
  readonly orgId: number;
  readonly name: string;
  readonly description: string | null;
  /** IANA time zone; null for UTC. */
  readonly timeZone: string | null;
}

export async function changeFacilityDetails(deps: CommandDeps, input: FacilityDetailsInput, ctx: CommandContext): Promise<{ changed: boolean }> {
  const result = await deps.handler.handle(streams.facility(input.facilityId), facilityDecider, { type: 'ChangeFacilityDetails', data: input }, ctx);
  const changed = result.events.length > 0;
  if (changed) await deps.watermark.waitFor(result.position, deps.projectionWaitMs, [READ_MODELS.facilities]);
  return { changed };
}
