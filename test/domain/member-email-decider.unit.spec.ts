import { ABANDONED_AFTER_MS, memberEmailDecider, type MemberEmailCommand, type MemberEmailEvent } from '../../shared/domain/member-email-decider.js';
import { ConflictError } from '../../shared/errors.js';
import { deciderSpec } from '../support/given-when-then.js';

const spec = deciderSpec(memberEmailDecider);
const CLAIMED_AT = '2026-03-10T08:00:00.000Z';
const later = (ms: number) => new Date(Date.parse(CLAIMED_AT) + ms).toISOString();
const claim = (userId: number, at = CLAIMED_AT, abandonedHolder: number | null = null): MemberEmailCommand => ({
  type: 'ClaimMemberEmail',
  data: { orgId: 1, userId, at, abandonedHolder },
});
const claimed = (userId: number, claimedAt = CLAIMED_AT): MemberEmailEvent => ({ type: 'MemberEmailClaimed', data: { orgId: 1, userId, claimedAt } });
const released = (userId: number): MemberEmailEvent => ({ type: 'MemberEmailReleased', data: { orgId: 1, userId } });

describe('member email decider', () => {
  describe('ClaimMemberEmail', () => {
    it('claims a free address for the user', () => {
      spec.given([]).when(claim(7)).then([claimed(7)]);
    });

    it('records nothing when its holder claims it again (a claim decided again after a lost race)', () => {
      spec.given([claimed(7)]).when(claim(7, later(1000))).thenNothing();
    });

    it('refuses another user while the holder exists, however old the claim', () => {
      spec.given([claimed(7)]).when(claim(8, later(ABANDONED_AFTER_MS * 10))).thenThrows(ConflictError, /already has a user with this email/);
    });

    it('refuses another user while a claim without its user is recent: that user may be on its way', () => {
      spec.given([claimed(7)]).when(claim(8, later(ABANDONED_AFTER_MS - 1), 7)).thenThrows(ConflictError);
    });

    it('takes over a claim whose user never appeared once it is abandoned', () => {
      spec.given([claimed(7)]).when(claim(8, later(ABANDONED_AFTER_MS), 7)).then([claimed(8, later(ABANDONED_AFTER_MS))]);
    });

    it('refuses when the holder found without a user is not the holder any more (a claim that changed meanwhile)', () => {
      spec.given([claimed(7), released(7), claimed(9)]).when(claim(8, later(ABANDONED_AFTER_MS * 2), 7)).thenThrows(ConflictError);
    });

    it('claims an address its holder gave back', () => {
      spec.given([claimed(7), released(7)]).when(claim(8, later(5))).then([claimed(8, later(5))]);
    });
  });

  describe('ReleaseMemberEmail', () => {
    it('gives the address back for its holder', () => {
      spec.given([claimed(7)]).when({ type: 'ReleaseMemberEmail', data: { orgId: 1, userId: 7 } }).then([released(7)]);
    });

    it('records nothing for a user who does not hold it (taken over, or released already)', () => {
      spec.given([claimed(7), released(7), claimed(8)]).when({ type: 'ReleaseMemberEmail', data: { orgId: 1, userId: 7 } }).thenNothing();
      spec.given([]).when({ type: 'ReleaseMemberEmail', data: { orgId: 1, userId: 7 } }).thenNothing();
    });
  });
});
