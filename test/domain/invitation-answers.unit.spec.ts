// Answering an invitation: accepted or declined once by the person it is addressed to (by user id
// or email), cancelled by an admin of its organization while pending.
import { invitationDecider, type InvitationCommand, type InvitationEvent, type Invitee } from '../../shared/domain/invitation-decider.js';
import { ConflictError, NotFoundError } from '../../shared/errors.js';
import { deciderSpec } from '../support/given-when-then.js';

const spec = deciderSpec(invitationDecider);
const created: InvitationEvent = { type: 'InvitationCreated', data: { inviteId: 3, orgId: 1, email: 'grace@acme.test', userId: null, role: 'self_invite' } };
const grace: Invitee = { userId: 42, orgId: 1, email: 'grace@acme.test' };
const accept = (invitee: Invitee = grace): InvitationCommand => ({ type: 'AcceptInvitation', data: { inviteId: 3, invitee } });
const decline = (invitee: Invitee = grace): InvitationCommand => ({ type: 'DeclineInvitation', data: { inviteId: 3, invitee } });
const cancel = (orgId = 1): InvitationCommand => ({ type: 'CancelInvitation', data: { inviteId: 3, orgId } });
const accepted: InvitationEvent = { type: 'InvitationAccepted', data: { inviteId: 3, orgId: 1, userId: 42, role: 'self_invite' } };
const declined: InvitationEvent = { type: 'InvitationDeclined', data: { inviteId: 3, orgId: 1, userId: 42 } };
const cancelled: InvitationEvent = { type: 'InvitationCancelled', data: { inviteId: 3, orgId: 1 } };

describe('invitation decider: answers', () => {
  it('the addressee (by email) accepts, with the role offered', () => {
    spec.given([created]).when(accept()).then([accepted]);
  });

  it('the addressee (by user id) declines', () => {
    spec.given([{ ...created, data: { ...created.data, email: 'other@acme.test', userId: 42 } } as InvitationEvent]).when(decline()).then([declined]);
  });

  it('someone it is not addressed to gets 404, whichever answer', () => {
    const stranger = { userId: 7, orgId: 1, email: 'linus@acme.test' };
    spec.given([created]).when(accept(stranger)).thenThrows(NotFoundError);
    spec.given([created]).when(decline(stranger)).thenThrows(NotFoundError);
  });

  it("a user of another organization cannot accept (no role there to hold), but can decline", () => {
    const elsewhere = { userId: 9, orgId: 2, email: 'grace@acme.test' };
    spec.given([created]).when(accept(elsewhere)).thenThrows(ConflictError);
    spec.given([created]).when(decline(elsewhere)).then([{ type: 'InvitationDeclined', data: { inviteId: 3, orgId: 1, userId: 9 } }]);
  });

  it('is answered once: a second accept by the same user records nothing, any other answer is 409', () => {
    spec.given([created, accepted]).when(accept()).then([]);
    spec.given([created, accepted]).when(decline()).thenThrows(ConflictError);
    spec.given([created, declined]).when(accept()).thenThrows(ConflictError);
    spec.given([created, cancelled]).when(accept()).thenThrows(ConflictError);
  });

  it('an admin of its organization cancels it while pending; twice records nothing; another organization gets 404', () => {
    spec.given([created]).when(cancel()).then([cancelled]);
    spec.given([created, cancelled]).when(cancel()).then([]);
    spec.given([created]).when(cancel(2)).thenThrows(NotFoundError);
    spec.given([created, accepted]).when(cancel()).thenThrows(ConflictError);
    spec.given([]).when(cancel()).thenThrows(NotFoundError);
  });
});
