import { expect } from 'chai';
import { deliveryJobsOf } from '../../projections/pass-delivery-reactor.js';
import type { RecordedEvent } from '../../shared/event-store/event-store.js';
import { passData, sampleEvents } from '../support/domain-fixtures.js';

const recorded = (type: string, data: unknown, revision: number): RecordedEvent =>
  ({
    id: `00000000-0000-4000-8000-${String(revision).padStart(12, '0')}`,
    type,
    data,
    metadata: { correlationId: 'c', causationId: null, actor: { kind: 'operator' }, occurredAt: '2026-12-01T09:00:00.000Z', schemaVersion: 2 },
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
