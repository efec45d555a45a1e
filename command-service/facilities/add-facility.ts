// Use case: add a facility to an organization (CLI `facility create`, demo bootstrap).
import type { CommandDeps } from '../command-deps.js';
import type { CommandContext } from '../../shared/event-store/command-handler.js';
import type { Position } from '../../shared/event-store/event-store.js';
import { streams } from '../../shared/domain/events.js';
import { facilityDecider } from '../../shared/domain/facility-decider.js';
import { organizationDecider } from '../../shared/domain/organization-decider.js';
import { NotFoundError } from '../../shared/errors.js';
import { READ_MODELS } from '../../shared/db/read-models.js';

export interface AddFacilityInput {
  readonly orgId: number;
  readonly name: string;
  readonly description?: string | null;
  /** IANA time zone; omitted or null for UTC. */
  readonly timeZone?: string | null;
}

export async function addFacility(
  deps: CommandDeps,
  { orgId, name, description, timeZone }: AddFacilityInput,
  ctx: CommandContext,
): Promise<{ facilityId: number; position: Position }> {
  const organization = await deps.handler.load(streams.organization(orgId), organizationDecider);
  if (organization.state.status === 'absent') throw new NotFoundError(`organization ${orgId} not found`);
  const [facilityId] = await deps.ids.next('facility');
  if (facilityId === undefined) throw new Error('id allocator returned no facility id');
  const result = await deps.handler.handle(
    streams.facility(facilityId),
    facilityDecider,
    { type: 'AddFacility', data: { facilityId, orgId, name, description: description ?? null, timeZone: timeZone ?? null } },
    ctx,
  );
  await deps.watermark.waitFor(result.position, deps.projectionWaitMs, [READ_MODELS.facilities]);
  return { facilityId, position: result.position };
}
