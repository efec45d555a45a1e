// Use case: create an organization (CLI `org create`, the embedded demo bootstrap).
import type { CommandDeps } from '../command-deps.js';
import type { CommandContext } from '../../shared/event-store/command-handler.js';
import type { Position } from '../../shared/event-store/event-store.js';
import { streams } from '../../shared/domain/events.js';
import { organizationDecider } from '../../shared/domain/organization-decider.js';
import { READ_MODELS } from '../../shared/db/read-models.js';

export interface CreateOrganizationInput {
  readonly name: string;
  /** Default monthly invite allowance of the organization's users; 50 when omitted. */
  readonly inviteAllowance?: number;
}

export async function createOrganization(
  deps: CommandDeps,
  input: CreateOrganizationInput,
  ctx: CommandContext,
): Promise<{ orgId: number; position: Position }> {
  const [orgId] = await deps.ids.next('organization');
  if (orgId === undefined) throw new Error('id allocator returned no organization id');
  const result = await deps.handler.handle(
    streams.organization(orgId),
    organizationDecider,
    { type: 'CreateOrganization', data: { orgId, name: input.name, inviteAllowance: input.inviteAllowance } },
    ctx,
  );
  await deps.watermark.waitFor(result.position, deps.projectionWaitMs, [READ_MODELS.organizations]);
  return { orgId, position: result.position };
}
