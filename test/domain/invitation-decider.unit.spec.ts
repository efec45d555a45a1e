import { expect } from 'chai';
import { invitationDecider, type InvitationCommand, type InvitationEvent } from '../../shared/domain/invitation-decider.js';
import { ConflictError, ValidationError } from '../../shared/errors.js';
import { eventDataErrors } from '../../shared/domain/event-schemas.js';
import { deciderSpec } from '../support/given-when-then.js';

const spec = deciderSpec(invitationDecider);
type CreateData = InvitationCommand['data'];
const create = (overrides: Partial<CreateData> = {}): InvitationCommand => ({
  type: 'CreateInvitation',
  data: { inviteId: 3, orgId: 1, email: 'grace@acme.test', userId: null, role: null, ...overrides },
});
const created = (overrides: Partial<InvitationEvent['data']> = {}): InvitationEvent => ({
  type: 'InvitationCreated',
  data: { inviteId: 3, orgId: 1, email: 'grace@acme.test', userId: null, role: null, ...overrides },
});

describe('invitation decider', () => {
  describe('CreateInvitation', () => {
    it('creates a pending invitation addressed by email', () => {
      spec.given([]).when(create()).then([created()]);
    });

    it('stores the email lower-cased and trimmed, as users and sign-in compare it', () => {
      spec.given([]).when(create({ email: '  Grace@ACME.test ' })).then([created()]);
    });

    it('keeps the matched user id and the role offered', () => {
      spec
        .given([])
        .when(create({ userId: 42, role: 'employee_view' }))
        .then([created({ userId: 42, role: 'employee_view' })]);
    });

    it('produces events the append-time schema accepts', () => {
      spec.given([]).when(create({ userId: 42, role: 'admin' })).thenInspect((events, state) => {
        for (const event of events) expect(eventDataErrors(event)).to.deep.equal([]);
        expect(state).to.deep.equal({ status: 'pending', inviteId: 3, orgId: 1, email: 'grace@acme.test', userId: 42, role: 'admin' });
      });
    });

    it('creates an invitation once', () => {
      spec.given([created()]).when(create()).thenThrows(ConflictError, /already exists/);
      spec.given([created()]).when(create({ email: 'someone@else.test' })).thenThrows(ConflictError);
    });

    it('refuses an address that is not an email', () => {
      spec.given([]).when(create({ email: 'grace' })).thenThrows(ValidationError, /email/);
      spec.given([]).when(create({ email: 'grace @acme.test' })).thenThrows(ValidationError);
      spec.given([]).when(create({ email: `${'g'.repeat(250)}@acme.test` })).thenThrows(ValidationError);
    });

    it('refuses a role that does not exist', () => {
      spec.given([]).when(create({ role: 'root' })).thenThrows(ValidationError, /unknown role "root"/);
    });

    it('refuses ids that are not positive whole numbers', () => {
      spec.given([]).when(create({ inviteId: 0 })).thenThrows(ValidationError, /invitation id/);
      spec.given([]).when(create({ orgId: -1 })).thenThrows(ValidationError, /organization id/);
      spec.given([]).when(create({ userId: 1.5 })).thenThrows(ValidationError, /user id/);
    });
  });
});
