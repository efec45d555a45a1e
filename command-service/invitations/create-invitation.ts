// Use case: invite someone to join an organization by email (CLI `invite create`). The invitee is
// matched to an existing user of the organization by email here, so the invitations listing finds
// the invitation by user id as well as by address.
import type { CommandDeps } from '../command-deps.js';
import type { CommandContext } from '../../shared/event-store/command-handler.js';
import type { Position } from '../../shared/event-store/event-store.js';
import { READ_MODELS } from '../../shared/db/read-models.js';
import { streams, type Role } from '../../shared/domain/events.js';
import { invitationDecider } from '../../shared/domain/invitation-decider.js';
import { organizationDecider } from '../../shared/domain/organization-decider.js';
import { normaliseEmail } from '../../shared/domain/user-decider.js';
import { NotFoundError } from '../../shared/errors.js';
import { oauthStreams } from '../../shared/oauth/oauth-events.js';
import { memberIdByEmail } from '../users/member-by-email.js';

export interface CreateInvitationInput {
  readonly orgId: number;
  readonly email: string;
  /** admin, self_invite or employee_view (checked by the decider); omit or null for none. */
  readonly role?: string | null;
}

export interface CreatedInvitation {
  readonly inviteId: number;
  readonly email: string;
  readonly userId: number | null;
  readonly role: Role | null;
  readonly position: Position;
}

export async function createInvitation(deps: CommandDeps, input: CreateInvitationInput, ctx: CommandContext): Promise<CreatedInvitation> {
  const organization = await deps.handler.load(streams.organization(input.orgId), organizationDecider);
  if (organization.state.status === 'absent') throw new NotFoundError(`organization ${input.orgId} not found`);
  // Normalised before the lookup: users' emails are stored lower-cased (user-decider.ts).
  const email = normaliseEmail(input.email);
  // Only a hint for the listing, so the read model suffices: a user added a moment later still
  // finds the invitation by email.
  const memberId = await memberIdByEmail(deps.db, input.orgId, email);
  const [inviteId] = await deps.ids.next('invitation');
  if (inviteId === undefined) throw new Error('id allocator returned no invitation id');
  const result = await deps.handler.handle(
    oauthStreams.invitation(inviteId),
    invitationDecider,
    { type: 'CreateInvitation', data: { inviteId, orgId: input.orgId, email, userId: memberId, role: input.role ?? null } },
    ctx,
  );
  const created = (result.events[0] as Extract<(typeof result.events)[number], { type: 'InvitationCreated' }>).data;
  await deps.watermark.waitFor(result.position, deps.projectionWaitMs, [READ_MODELS.invitations]);
  return { inviteId, email: created.email, userId: created.userId, role: created.role as Role | null, position: result.position };
}
