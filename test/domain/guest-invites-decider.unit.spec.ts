import { expect } from 'chai';
import {
  guestInvitesDecider,
  PassIndex,
  type GuestInvitesCommand,
  type GuestInvitesEvent,
} from '../../shared/domain/guest-invites-decider.js';
import type { PassCreated } from '../../shared/domain/events.js';
import { ConflictError, NotFoundError, QuotaExceededError, ValidationError } from '../../shared/errors.js';
import { deciderSpec } from '../support/given-when-then.js';
import { passData, publicId, sampleEvents, sha256 } from '../support/domain-fixtures.js';

const spec = deciderSpec(guestInvitesDecider);
const createdEvent = (n: number): GuestInvitesEvent => ({ type: 'PassCreated', data: passData(n) });
const createdEvents = (from: number, count: number) => Array.from({ length: count }, (_, i) => createdEvent(from + i));
const revokedEvent = (n: number): GuestInvitesEvent => ({
  type: 'PassRevoked',
  data: { passId: n, publicId: publicId(n), orgId: 1, facilityId: 10, qrHash: sha256(`qr-${n}`) },
});
const createPasses = (limit: number, ...ns: number[]): GuestInvitesCommand => ({
  type: 'CreatePasses',
  data: { limit, passes: ns.map((n) => passData(n, { batchSize: ns.length })) },
});
const revoke = (n: number, orgId?: number): GuestInvitesCommand => ({ type: 'RevokePass', data: { publicId: publicId(n), orgId } });

describe('guest invites decider', () => {
  describe('CreatePasses', () => {
    it('records one PassCreated per pass of the batch, in order', () => {
      const events = spec.given([]).when(createPasses(10, 1, 2, 3)).then(
        [1, 2, 3].map((n) => ({ type: 'PassCreated', data: passData(n, { batchSize: 3 }) }) as PassCreated),
      );
      expect(events).to.have.length(3);
    });

    it('accepts a batch that exactly fills the allowance', () => {
      spec.given(createdEvents(1, 8)).when(createPasses(10, 9, 10)).thenInspect((events, state) => {
        expect(events).to.have.length(2);
        expect(state.used).to.equal(10);
      });
    });

    it('refuses a batch that does not fit, all or nothing, reporting limit, current and requested', () => {
      const error = spec.given(createdEvents(1, 9)).when(createPasses(10, 10, 11)).thenThrows(QuotaExceededError);
      expect(error).to.include({ limit: 10, current: 9, requested: 2, status: 402, code: 'CAPACITY_EXCEEDED', dimension: 'guest_invites' });
    });

    it('counts revoked passes toward the month', () => {
      spec
        .given([...createdEvents(1, 10), revokedEvent(1), revokedEvent(2)])
        .when(createPasses(10, 11))
        .thenThrows(QuotaExceededError);
    });

    it('refuses everything under an allowance of zero', () => {
      spec.given([]).when(createPasses(0, 1)).thenThrows(QuotaExceededError);
    });

    it('applies a raised allowance to the same month', () => {
      spec.given(createdEvents(1, 10)).when(createPasses(12, 11, 12)).thenInspect((events) => expect(events).to.have.length(2));
    });

    it('refuses an empty batch and a batch of more than 10', () => {
      spec.given([]).when(createPasses(50)).thenThrows(ValidationError);
      spec.given([]).when(createPasses(50, ...Array.from({ length: 11 }, (_, i) => i + 1))).thenThrows(ValidationError);
    });

    it('refuses a public id that is already in use, in the batch or the month', () => {
      spec.given([createdEvent(1)]).when(createPasses(10, 1)).thenThrows(ConflictError);
      spec.given([]).when(createPasses(10, 2, 2)).thenThrows(ConflictError);
    });
  });

  describe('RevokePass', () => {
    it('revokes an expected pass, naming its QR hash for the doors', () => {
      spec.given([createdEvent(1)]).when(revoke(1)).then([revokedEvent(1)]);
    });

    it('revokes within the organization', () => {
      spec.given([createdEvent(1)]).when(revoke(1, 1)).then([revokedEvent(1)]);
    });

    it('is 409 once the guest has checked in (the pass is no longer active)', () => {
      const checkedIn: GuestInvitesEvent = { type: 'PassCheckedIn', data: { ...sampleEvents.PassCheckedIn.data, publicId: publicId(1), passId: 1 } };
      spec.given([createdEvent(1), checkedIn]).when(revoke(1)).thenThrows(ConflictError, /no longer active/);
    });

    it('is 409 once the pass is cancelled', () => {
      spec.given([createdEvent(1), revokedEvent(1)]).when(revoke(1)).thenThrows(ConflictError, /no longer active/);
    });

    it('is 404 for an unknown pass or a pass of another organization', () => {
      spec.given([createdEvent(1)]).when(revoke(2)).thenThrows(NotFoundError);
      spec.given([createdEvent(1)]).when(revoke(1, 2)).thenThrows(NotFoundError);
    });

    it('leaves the month\'s usage unchanged and marks the pass cancelled', () => {
      spec.given(createdEvents(1, 3)).when(revoke(2)).thenInspect((_events, state) => {
        expect(state.used).to.equal(3);
        expect(state.passes.get(publicId(2))?.status).to.equal('cancelled');
        expect(state.passes.get(publicId(1))?.status).to.equal('expected');
      });
    });
  });

  describe('RegisterGuest', () => {
    const batchId = passData(1).batchId;
    const registration = sampleEvents.PassRegistered.data.registration;
    const register = (now = '2026-03-01T10:00:00.000Z', id = batchId): GuestInvitesCommand => ({
      type: 'RegisterGuest',
      data: { batchId: id, registration, termsAccepted: false, now },
    });
    const registered = (n: number): GuestInvitesEvent => ({
      type: 'PassRegistered',
      data: { passId: n, publicId: publicId(n), orgId: 1, facilityId: 10, batchId, registration, termsAccepted: false },
    });

    it('moves every expected pass of the batch to registered, and only that batch', () => {
      const otherBatch: GuestInvitesEvent = { type: 'PassCreated', data: passData(3, { batchId: 'another-batch' }) };
      spec.given([createdEvent(1), createdEvent(2), otherBatch]).when(register()).thenInspect((events, state) => {
        expect(events).to.deep.equal([registered(1), registered(2)]);
        expect(state.passes.get(publicId(1))?.status).to.equal('registered');
        expect(state.passes.get(publicId(3))?.status).to.equal('expected');
      });
    });

    it('is idempotent: a registered batch records nothing, and a revoked pass of it stays cancelled', () => {
      spec.given([createdEvent(1), registered(1)]).when(register()).thenNothing();
      spec.given([createdEvent(1), createdEvent(2), revokedEvent(2)]).when(register()).then([registered(1)]);
    });

    it('is 409 when no pass of the batch is active within its window, 404 for an unknown batch', () => {
      spec.given([createdEvent(1), revokedEvent(1)]).when(register()).thenThrows(ConflictError);
      spec.given([createdEvent(1)]).when(register('2026-03-02T00:00:00.000Z')).thenThrows(ConflictError);
      spec.given([createdEvent(1)]).when(register(undefined, 'no-such-batch')).thenThrows(NotFoundError);
    });

    it('still lets a registered pass be revoked (it is active)', () => {
      spec.given([createdEvent(1), registered(1)]).when(revoke(1)).then([revokedEvent(1)]);
    });
  });

  it('folds past event types it does not know instead of breaking the stream', () => {
    const unknown = { type: 'PassBadgePrinted', data: { publicId: publicId(1) } } as unknown as GuestInvitesEvent;
    spec.given([createdEvent(1), unknown]).when(revoke(1)).then([revokedEvent(1)]);
  });

  describe('PassIndex', () => {
    const entry = (passId: number) => ({
      passId,
      status: 'expected' as const,
      facilityId: 1,
      orgId: 1,
      qrHash: 'h',
      batchId: 'b',
      validUntil: '2026-03-01T23:59:59.999Z',
    });

    it('is persistent: an update leaves the previous index as it was', () => {
      const a = PassIndex.empty.set('x', entry(1));
      const b = a.set('x', { ...entry(1), status: 'cancelled' }).set('y', entry(2));
      expect(a.get('x')?.status).to.equal('expected');
      expect(a.has('y')).to.equal(false);
      expect(a.size).to.equal(1);
      expect(b.get('x')?.status).to.equal('cancelled');
      expect(b.size).to.equal(2);
      expect(PassIndex.empty.size).to.equal(0);
    });

    it('folds a large month in near-linear time', () => {
      let index = PassIndex.empty;
      const started = process.hrtime.bigint();
      for (let i = 0; i < 20_000; i++) index = index.set(publicId(i), entry(i));
      const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
      expect(index.size).to.equal(20_000);
      expect(index.get(publicId(12_345))?.passId).to.equal(12_345);
      expect([...index.entries()]).to.have.length(20_000);
      expect(elapsedMs).to.be.below(2000);
    });
  });
});
