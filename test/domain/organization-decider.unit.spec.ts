import { organizationDecider, type OrganizationEvent } from '../../shared/domain/organization-decider.js';
import { ConflictError, NotFoundError, ValidationError } from '../../shared/errors.js';
import { deciderSpec } from '../support/given-when-then.js';

const spec = deciderSpec(organizationDecider);
const created: OrganizationEvent = { type: 'OrganizationCreated', data: { orgId: 1, name: 'Acme', inviteAllowance: 50 } };

describe('organization decider', () => {
  describe('CreateOrganization', () => {
    it('creates an organization with the default allowance of 50', () => {
      spec.given([]).when({ type: 'CreateOrganization', data: { orgId: 1, name: '  Acme ' } }).then([created]);
    });

    it('keeps an explicit allowance, zero included', () => {
      spec
        .given([])
        .when({ type: 'CreateOrganization', data: { orgId: 1, name: 'Acme', inviteAllowance: 0 } })
        .then([{ type: 'OrganizationCreated', data: { orgId: 1, name: 'Acme', inviteAllowance: 0 } }]);
    });

    it('refuses to create it twice', () => {
      spec.given([created]).when({ type: 'CreateOrganization', data: { orgId: 1, name: 'Acme' } }).thenThrows(ConflictError);
    });

    it('refuses a blank or over-long name', () => {
      spec.given([]).when({ type: 'CreateOrganization', data: { orgId: 1, name: '   ' } }).thenThrows(ValidationError);
      spec.given([]).when({ type: 'CreateOrganization', data: { orgId: 1, name: 'x'.repeat(201) } }).thenThrows(ValidationError);
    });

    it('refuses a negative or fractional allowance', () => {
      spec.given([]).when({ type: 'CreateOrganization', data: { orgId: 1, name: 'A', inviteAllowance: -1 } }).thenThrows(ValidationError);
      spec.given([]).when({ type: 'CreateOrganization', data: { orgId: 1, name: 'A', inviteAllowance: 1.5 } }).thenThrows(ValidationError);
    });
  });

  describe('ChangeInviteAllowance', () => {
    it('records the new allowance', () => {
      spec
        .given([created])
        .when({ type: 'ChangeInviteAllowance', data: { orgId: 1, inviteAllowance: 10 } })
        .then([{ type: 'OrganizationInviteAllowanceChanged', data: { orgId: 1, inviteAllowance: 10 } }]);
    });

    it('records nothing when the allowance is already that value', () => {
      spec
        .given([created, { type: 'OrganizationInviteAllowanceChanged', data: { orgId: 1, inviteAllowance: 10 } }])
        .when({ type: 'ChangeInviteAllowance', data: { orgId: 1, inviteAllowance: 10 } })
        .thenNothing();
    });

    it('is 404 for an unknown organization', () => {
      spec.given([]).when({ type: 'ChangeInviteAllowance', data: { orgId: 1, inviteAllowance: 10 } }).thenThrows(NotFoundError);
    });

    it('refuses an invalid allowance', () => {
      spec.given([created]).when({ type: 'ChangeInviteAllowance', data: { orgId: 1, inviteAllowance: -5 } }).thenThrows(ValidationError);
    });
  });
});
