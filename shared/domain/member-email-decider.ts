// One email address within one organization: which user holds it. Adding a user claims the
// address first (expected revision on this stream), so two users of one organization never share
// an address, however many processes add them at once. The user is added after the claim, in
// its own stream; when that fails (and no user was written) the claim is released. A claim whose
// user never appeared (its process ended in between) may be taken over once it is older than
// ABANDONED_AFTER_MS, and only after that user's creation was closed for good
// (UserCreationAbandoned on its stream, expected: no stream), so it cannot land afterwards.
import type { Decider } from './decider.js';
import type { MemberEmailClaimed, MemberEmailReleased } from './events.js';
import { ConflictError } from '../errors.js';

/** Far beyond the time between a claim and its user's append (milliseconds, retries included). */
export const ABANDONED_AFTER_MS = 10 * 60_000;

export type MemberEmailEvent = MemberEmailClaimed | MemberEmailReleased;

export type MemberEmailCommand =
  | {
      type: 'ClaimMemberEmail';
      data: {
        orgId: number;
        userId: number;
        /** ISO 8601 time of the claim. */
        at: string;
        /** The holder whose user creation the caller closed (UserCreationAbandoned), or null. */
        abandonedHolder: number | null;
      };
    }
  | { type: 'ReleaseMemberEmail'; data: { orgId: number; userId: number } };

export type MemberEmailState = { holder: null } | { holder: number; claimedAt: string };

export const ALREADY_TAKEN = (orgId: number) => `organization ${orgId} already has a user with this email`;

/** Whether a claim made at `claimedAt` is old enough, at `at`, to take over when its user never appeared. */
export function claimAbandoned(claimedAt: string, at: string): boolean {
  return Date.parse(at) - Date.parse(claimedAt) >= ABANDONED_AFTER_MS;
}

export const memberEmailDecider: Decider<MemberEmailCommand, MemberEmailEvent, MemberEmailState> = {
  initialState: () => ({ holder: null }),

  evolve(state, event) {
    switch (event.type) {
      case 'MemberEmailClaimed':
        return { holder: event.data.userId, claimedAt: event.data.claimedAt };
      case 'MemberEmailReleased':
        return state.holder === event.data.userId ? { holder: null } : state;
      default:
        return state;
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'ClaimMemberEmail': {
        const { orgId, userId, at } = command.data;
        if (state.holder === userId) return [];
        if (state.holder !== null && !(state.holder === command.data.abandonedHolder && claimAbandoned(state.claimedAt, at))) {
          throw new ConflictError(ALREADY_TAKEN(orgId));
        }
        return [{ type: 'MemberEmailClaimed', data: { orgId, userId, claimedAt: at } }];
      }
      case 'ReleaseMemberEmail': {
        const { orgId, userId } = command.data;
        return state.holder === userId ? [{ type: 'MemberEmailReleased', data: { orgId, userId } }] : [];
      }
    }
  },
};
