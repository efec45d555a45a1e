import { expect } from 'chai';
import { deliveryJobsOf, jobUpdatesOf, resentBatchesOf } from '../../projections/pass-delivery-reactor.js';
import type { RecordedEvent } from '../../shared/event-store/event-store.js';
import { passData, sampleEvents } from '../support/domain-fixtures.js';

const recorded = (type: string, data: unknown, revision: number, occurredAt = '2026-12-01T09:00:00.000Z'): RecordedEvent =>
  ({
    id: `00000000-0000-4000-8000-${String(revision).padStart(12, '0')}`,
    type,
    data,
    metadata: { correlationId: 'c', causationId: null, actor: { kind: 'operator' }, occurredAt, schemaVersion: 2 },
    streamName: 'guest-invites-100-2026-12',
    revision,
    position: { commit: BigInt(revision + 1), prepare: BigInt(revision + 1) },
    recordedAt: new Date(),
  }) as RecordedEvent;

describe('pass delivery reactor: what goes on the work list', () => {
  const now = new Date('2026-12-01T09:00:01.000Z');
  const hash = 'a'.repeat(64);

  it('puts a batch on the list once, with its first PassCreated', () => {
    const events = [
      recorded('PassCreated', passData(1, { passLinkHash: hash, batchSize: 2 }), 4),
      recorded('PassCreated', passData(2, { passLinkHash: hash, batchSize: 2 }), 5),
    ];
    expect(deliveryJobsOf(events, now)).to.deep.equal([
      {
        batch_id: passData(1).batchId,
        org_id: 1,
        pass: passData(1, { passLinkHash: hash, batchSize: 2 }),
        event_id: events[0]!.id,
        correlation_id: 'c',
        next_attempt_at: now,
      },
    ]);
  });

  it('leaves out batches from before the pass page (no link) and every other event', () => {
    const events = [recorded('PassCreated', passData(1), 0), recorded('PassRevoked', sampleEvents.PassRevoked.data, 1)];
    expect(deliveryJobsOf(events, now)).to.deep.equal([]);
  });
});

describe('pass delivery work list: what recorded outcomes do to a batch', () => {
  const batchId = '0b7f6c1e-5d2a-4c3b-9e8f-112233445566';
  const sent = (channel: string, attempt: number) => ({ batchId, orgId: 1, channel, attempt, messageId: `m-${channel}`, providerMessageId: null });
  const failed = (channel: string, attempt: number, final: boolean) => ({ batchId, orgId: 1, channel, attempt, errorClass: final ? 'recipient_refused' : 'provider_unavailable', final });

  it('takes a batch off the list once a round settles every channel it tried', () => {
    const events = [recorded('PassDeliverySucceeded', sent('email', 1), 0), recorded('PassDeliveryFailed', failed('sms', 1, true), 1)];
    expect(jobUpdatesOf(events)).to.deep.equal([{ batch_id: batchId, done: true, next_attempt_at: null }]);
  });

  it('makes it due again after the pause a transient failure calls for, from the time it was recorded', () => {
    const events = [recorded('PassDeliverySucceeded', sent('email', 1), 0), recorded('PassDeliveryFailed', failed('sms', 1, false), 1)];
    expect(jobUpdatesOf(events)).to.deep.equal([{ batch_id: batchId, done: false, next_attempt_at: new Date('2026-12-01T09:00:01.000Z') }]);
    const third = [recorded('PassDeliveryFailed', failed('sms', 3, false), 4, '2026-12-01T10:00:00.000Z')];
    expect(jobUpdatesOf(third)).to.deep.equal([{ batch_id: batchId, done: false, next_attempt_at: new Date('2026-12-01T10:01:00.000Z') }]);
  });

  it('goes by the last round of a batch (one append, one time) when a replay brings several', () => {
    const events = [
      recorded('PassDeliveryFailed', failed('sms', 1, false), 0, '2026-12-01T09:00:00.000Z'),
      recorded('PassDeliverySucceeded', sent('sms', 2), 1, '2026-12-01T09:00:01.500Z'),
      recorded('PassCreated', passData(9), 2),
    ];
    expect(jobUpdatesOf(events)).to.deep.equal([{ batch_id: batchId, done: true, next_attempt_at: null }]);
  });

  it('puts a resent batch back on the list, and only the new round\'s outcomes say what becomes of it', () => {
    const resend = { batchId, orgId: 1, requestedBy: 7, requestedAt: '2026-12-01T09:05:00.000Z' };
    const before = [recorded('PassDeliverySucceeded', sent('email', 1), 0), recorded('PassMessageResendRequested', resend, 1, '2026-12-01T09:05:00.000Z')];
    expect(resentBatchesOf(before)).to.deep.equal([batchId]);
    // The first round's success says nothing of the new round: nothing takes the batch off again.
    expect(jobUpdatesOf(before)).to.deep.equal([]);
    const after = [...before, recorded('PassDeliveryFailed', failed('email', 1, false), 2, '2026-12-01T09:05:01.000Z')];
    expect(jobUpdatesOf(after)).to.deep.equal([{ batch_id: batchId, done: false, next_attempt_at: new Date('2026-12-01T09:05:02.000Z') }]);
    expect(resentBatchesOf([recorded('PassDeliverySucceeded', sent('email', 1), 0)])).to.deep.equal([]);
  });
});
