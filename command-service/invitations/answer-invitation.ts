// Use cases: accept or decline an invitation (its invitee, in /invitations) and cancel one (an
// admin of its organization, in /settings/people). Accepting grants the role offered: the
// acceptance is recorded on the invitation's stream first (it can be answered once), then the
// role on the user's own stream. A failure between the two is mended by accepting again: the
// decider records nothing for the same user's second accept, and granting a held role is a no-op.
import type { CommandDeps } from '../command-deps.js';
import type { CommandContext } from '../../shared/event-store/command-handler.js';
import type { Position } from '../../shared/event-store/event-store.js';
import { READ_MODELS, type UserRow } from '../../shared/db/read-models.js';
import { streams, type Role } from '../../shared/domain/events.js';
import { invitationDecider, type Invitee } from '../../shared/domain/invitation-decider.js';
import { userDecider } from '../../shared/domain/user-decider.js';
import { NotFoundError } from '../../shared/errors.js';
import { oauthStreams } from '../../shared/oauth/oauth-events.js';

async function inviteeOf(deps: CommandDeps, userId: number): Promise<Invitee> {
  const row = await deps.db<UserRow>(READ_MODELS.users).first('user_id', 'org_id', 'email').where({ user_id: userId });
  if (row === undefined) throw new NotFoundError(`user ${userId} not found`);
  return { userId: row.user_id, orgId: row.org_id, email: row.email.toLowerCase() };
}

export async function acceptInvitation(
  deps: CommandDeps,
  input: { readonly inviteId: number; readonly userId: number },
  ctx: CommandContext,
): Promise<{ role: Role | null; position: Position }> {
  const invitee = await inviteeOf(deps, input.userId);
  const accepted = await deps.handler.handle(oauthStreams.invitation(input.inviteId), invitationDecider, { type: 'AcceptInvitation', data: { inviteId: input.inviteId, invitee } }, ctx);
  const { state } = await deps.handler.load(oauthStreams.invitation(input.inviteId), invitationDecider);
  const role = state.status === 'absent' ? null : state.role;
  let position = accepted.position;
  if (role !== null) {
    const granted = await deps.handler.handle(streams.user(invitee.userId), userDecider, { type: 'GrantRole', data: { userId: invitee.userId, orgId: invitee.orgId, role } }, ctx);
    if (granted.events.length > 0) position = granted.position;
  }
  await deps.watermark.waitFor(position, deps.projectionWaitMs, [READ_MODELS.invitations, READ_MODELS.users]);
  return { role, position };
}

export async function declineInvitation(
  deps: CommandDeps,
  input: { readonly inviteId: number; readonly userId: number },
  ctx: CommandContext,
): Promise<{ position: Position }> {
  const invitee = await inviteeOf(deps, input.userId);
  const result = await deps.handler.handle(oauthStreams.invitation(input.inviteId), invitationDecider, { type: 'DeclineInvitation', data: { inviteId: input.inviteId, invitee } }, ctx);
  await deps.watermark.waitFor(result.position, deps.projectionWaitMs, [READ_MODELS.invitations]);
  return { position: result.position };
}

export async function cancelInvitation(
  deps: CommandDeps,
  input: { readonly inviteId: number; readonly orgId: number },
  ctx: CommandContext,
): Promise<{ cancelled: boolean; position: Position }> {
  const result = await deps.handler.handle(oauthStreams.invitation(input.inviteId), invitationDecider, { type: 'CancelInvitation', data: input }, ctx);
  const cancelled = result.events.length > 0;
  if (cancelled) await deps.watermark.waitFor(result.position, deps.projectionWaitMs, [READ_MODELS.invitations]);
  return { cancelled, position: result.position };
}
