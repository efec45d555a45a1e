// Use case: erase a member's personal data (CLI `member erase`). The contact key is destroyed,
// and the name key too with `includeName`, then MemberErased is recorded: every box sealed under
// them, in every event, can never be opened again, and the log is not rewritten. Keys go first so
// that no projection (live or rebuilt) opens what the event says is erased; they are destroyed
// again after the append, as the stream then says, which catches a profile change that raced the
// erasure and completes an erasure a crash interrupted. Idempotent.
import type { CommandDeps } from '../command-deps.js';
import type { CommandContext } from '../../shared/event-store/command-handler.js';
import { START, type Position } from '../../shared/event-store/event-store.js';
import { streams } from '../../shared/domain/events.js';
import { memberDecider } from '../../shared/domain/member-decider.js';
import { memberContactSubject, memberNameSubject } from '../../shared/domain/member-events.js';
import { waitForMemberDirectory } from './member-directory.js';
import { loadMember } from './member-profile.js';

export interface EraseMemberOptions {
  /** Erase the first and last name too (default: the contact only). */
  readonly includeName?: boolean;
  /** When given, a member of another organization is 404. */
  readonly orgId?: number;
}

export async function eraseMember(
  deps: CommandDeps,
  memberId: string,
  options: EraseMemberOptions,
  ctx: CommandContext,
): Promise<{ changed: boolean; includeName: boolean; position: Position }> {
  const includeName = options.includeName ?? false;
  const data = { memberId, includeName, ...(options.orgId !== undefined ? { orgId: options.orgId } : {}) };
  const member = await loadMember(deps, memberId, options.orgId);
  await deps.subjectKeys.destroy(memberContactSubject(memberId));
  if (includeName || member.nameErased) await deps.subjectKeys.destroy(memberNameSubject(memberId));
  const result = await deps.handler.handle(streams.member(memberId), memberDecider, { type: 'EraseMember', data }, ctx);
  const state = result.state;
  const nameErased = state.status !== 'absent' && state.nameErased;
  await deps.subjectKeys.destroy(memberContactSubject(memberId));
  if (nameErased) await deps.subjectKeys.destroy(memberNameSubject(memberId));
  const changed = result.events.length > 0;
  const position = changed ? result.position : START;
  await waitForMemberDirectory(deps, position);
  return { changed, includeName: nameErased, position };
}
