// Use case: change a member's profile (CLI `member update`). The input is a patch: a field left
// undefined keeps its value, null or blank clears an optional one; the whole resulting profile is
// checked and recorded (MemberProfileChanged is never a patch). Nothing is recorded when nothing
// changes. After an erasure the contact cannot be given again (409), nor anything after the name's.
import type { CommandDeps } from '../command-deps.js';
import type { CommandContext } from '../../shared/event-store/command-handler.js';
import type { Position } from '../../shared/event-store/event-store.js';
import { parseMemberProfile, type MemberProfileInput } from '../../shared/domain/member-input.js';
import { MEMBER_ERASED } from '../../shared/domain/member-decider.js';
import { ConflictError } from '../../shared/errors.js';
import { basisOf, changeProfile, keysOf, loadMember, profileChange, profileOf } from './member-profile.js';
import { waitForMemberDirectory } from './member-directory.js';

export interface UpdateMemberOptions {
  /** When given, a member of another organization is 404. */
  readonly orgId?: number;
}

export async function updateMember(
  deps: CommandDeps,
  memberId: string,
  patch: MemberProfileInput,
  ctx: CommandContext,
  options: UpdateMemberOptions = {},
): Promise<{ changed: boolean; position: Position }> {
  const member = await loadMember(deps, memberId, options.orgId);
  if (member.nameErased) throw new ConflictError(MEMBER_ERASED(memberId));
  const keys = await keysOf(deps, [member]);
  const basis = basisOf(member, keys);
  if (basis === null) throw new Error(`the keys of member ${memberId} are missing`);
  const current = profileOf(member, basis);
  const pick = <K extends keyof MemberProfileInput>(field: K) => (patch[field] === undefined ? current[field] : patch[field]);
  const profile = parseMemberProfile({
    firstName: pick('firstName'),
    lastName: pick('lastName'),
    email: pick('email'),
    phone: pick('phone'),
    jobTitle: pick('jobTitle'),
    department: pick('department'),
    externalId: pick('externalId'),
  });
  const command = await profileChange(deps, member, keys, profile, options.orgId);
  const result = await changeProfile(deps, memberId, command, ctx);
  await waitForMemberDirectory(deps, result.position);
  return result;
}
