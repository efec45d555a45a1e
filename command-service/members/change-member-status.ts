// Use cases: deactivate and reactivate a member (CLI `member deactivate|reactivate`). Idempotent:
// a member already in that state records nothing (`changed: false`).
import type { CommandDeps } from '../command-deps.js';
import type { CommandContext } from '../../shared/event-store/command-handler.js';
import { START, type Position } from '../../shared/event-store/event-store.js';
import { streams } from '../../shared/domain/events.js';
import { memberDecider } from '../../shared/domain/member-decider.js';
import { waitForMemberDirectory } from './member-directory.js';

export interface MemberRef {
  readonly memberId: string;
  /** When given, a member of another organization is 404. */
  readonly orgId?: number;
}

async function change(
  deps: CommandDeps,
  type: 'DeactivateMember' | 'ReactivateMember',
  ref: MemberRef,
  ctx: CommandContext,
): Promise<{ changed: boolean; position: Position }> {
  const data = { memberId: ref.memberId, ...(ref.orgId !== undefined ? { orgId: ref.orgId } : {}) };
  const result = await deps.handler.handle(streams.member(ref.memberId), memberDecider, { type, data }, ctx);
  const changed = result.events.length > 0;
  const position = changed ? result.position : START;
  await waitForMemberDirectory(deps, position);
  return { changed, position };
}

export const deactivateMember = (deps: CommandDeps, ref: MemberRef, ctx: CommandContext) => change(deps, 'DeactivateMember', ref, ctx);
export const reactivateMember = (deps: CommandDeps, ref: MemberRef, ctx: CommandContext) => change(deps, 'ReactivateMember', ref, ctx);
