// Use case: add a member to an organization's directory (CLI `member add`; addUser for every new
// user). Names and contact are sealed under two keys of the member's (member-profile.ts); the
// member's id is `emp_` + 128 random bits.
import type { CommandDeps } from '../command-deps.js';
import type { CommandContext } from '../../shared/event-store/command-handler.js';
import type { Position } from '../../shared/event-store/event-store.js';
import { parseMemberProfile, type MemberProfileInput } from '../../shared/domain/member-input.js';
import { assertOrganization, joinMember } from './member-profile.js';
import { waitForMemberDirectory } from './member-directory.js';

export interface AddMemberInput extends MemberProfileInput {
  readonly orgId: number;
  readonly firstName: string;
  readonly lastName: string;
  /** The user this member is; omit (or null) for a member without sign-in. */
  readonly userId?: number | null;
}

export async function addMember(deps: CommandDeps, input: AddMemberInput, ctx: CommandContext): Promise<{ memberId: string; position: Position }> {
  const profile = parseMemberProfile(input);
  await assertOrganization(deps, input.orgId);
  const joined = await joinMember(deps, input.orgId, profile, input.userId ?? null, ctx);
  await waitForMemberDirectory(deps, joined.position);
  return joined;
}
