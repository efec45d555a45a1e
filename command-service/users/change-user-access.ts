// Use cases: change a user's roles and invite allowances (the console's /settings/people), and the
// organization's default allowance. Each runs the deciders' commands (user-decider.ts,
// organization-decider.ts): granting a held role, revoking a missing one or setting the same
// allowance records nothing, so a repeated form changes nothing.
import type { CommandDeps } from '../command-deps.js';
import type { CommandContext } from '../../shared/event-store/command-handler.js';
import type { Position } from '../../shared/event-store/event-store.js';
import { READ_MODELS } from '../../shared/db/read-models.js';
import { ROLES, streams, type Role } from '../../shared/domain/events.js';
import { organizationDecider } from '../../shared/domain/organization-decider.js';
import { userDecider, userInOrg } from '../../shared/domain/user-decider.js';
import { ValidationError } from '../../shared/errors.js';

/**
 * Sets the user's roles to exactly `roles`: grants what is missing, revokes what is not asked
 * for, on the user's one stream (a stream of another organization's user is 404).
 */
export async function setUserRoles(
  deps: CommandDeps,
  input: { readonly orgId: number; readonly userId: number; readonly roles: readonly string[] },
  ctx: CommandContext,
): Promise<{ granted: Role[]; revoked: Role[]; position: Position | null }> {
  const unknown = input.roles.filter((r) => !(ROLES as readonly string[]).includes(r));
  if (unknown.length > 0) throw new ValidationError(`unknown role "${unknown[0]}"; roles are ${ROLES.join(', ')}`);
  const stream = streams.user(input.userId);
  const { state } = await deps.handler.load(stream, userDecider);
  const user = userInOrg(state, input.userId, input.orgId);
  const granted = ROLES.filter((r) => input.roles.includes(r) && !user.roles.includes(r));
  const revoked = ROLES.filter((r) => !input.roles.includes(r) && user.roles.includes(r));
  let position: Position | null = null;
  for (const role of granted) {
    ({ position } = await deps.handler.handle(stream, userDecider, { type: 'GrantRole', data: { userId: input.userId, orgId: input.orgId, role } }, ctx));
  }
  for (const role of revoked) {
    ({ position } = await deps.handler.handle(stream, userDecider, { type: 'RevokeRole', data: { userId: input.userId, orgId: input.orgId, role } }, ctx));
  }
  if (position !== null) await deps.watermark.waitFor(position, deps.projectionWaitMs, [READ_MODELS.users]);
  return { granted, revoked, position };
}

/** A user's own monthly invite allowance; null returns them to the organization's default. */
export async function changeUserInviteAllowance(
  deps: CommandDeps,
  input: { readonly orgId: number; readonly userId: number; readonly inviteAllowance: number | null },
  ctx: CommandContext,
): Promise<{ changed: boolean }> {
  const result = await deps.handler.handle(streams.user(input.userId), userDecider, { type: 'ChangeInviteAllowance', data: input }, ctx);
  const changed = result.events.length > 0;
  if (changed) await deps.watermark.waitFor(result.position, deps.projectionWaitMs, [READ_MODELS.users]);
  return { changed };
}

/** The organization's default monthly invite allowance (for users without their own). */
export async function changeOrganizationInviteAllowance(
  deps: CommandDeps,
  input: { readonly orgId: number; readonly inviteAllowance: number },
  ctx: CommandContext,
): Promise<{ changed: boolean }> {
  const result = await deps.handler.handle(streams.organization(input.orgId), organizationDecider, { type: 'ChangeInviteAllowance', data: input }, ctx);
  const changed = result.events.length > 0;
  if (changed) await deps.watermark.waitFor(result.position, deps.projectionWaitMs, [READ_MODELS.organizations]);
  return { changed };
}
