import { expect } from 'chai';
import { passBatchesProjection } from '../../projections/pass-batches-projection.js';
import type { OpenedDomainEvent } from '../../projections/projection.js';
import { EventLog, feed, feedOneByOne, guest, passCreated, visible } from './fixtures.js';

const LINK = 'b'.repeat(64);

function withLink(passId: number, options: Parameters<typeof passCreated>[1] = {}) {
  const event = passCreated(passId, { batchId: 'batch-1', ...options });
  return { ...event, data: { ...event.data, passLinkHash: LINK, batchSize: 2 } };
}

const outcome = (type: 'PassDeliverySucceeded' | 'PassDeliveryFailed', channel: 'email' | 'sms', attempt: number, final = false): OpenedDomainEvent =>
  type === 'PassDeliverySucceeded'
    ? { type, data: { batchId: 'batch-1', orgId: 1, channel, attempt, messageId: '<m@x>', providerMessageId: null } }
    : { type, data: { batchId: 'batch-1', orgId: 1, channel, attempt, errorClass: 'provider_unavailable', final } };

describe('pass_batches projection', () => {
  it('keeps one row per batch, from its first PassCreated, with both channels pending', () => {
    const log = new EventLog();
    log.add(withLink(1), { stream: 'guest-invites-100-2025-03' });
    log.add(withLink(2), { stream: 'guest-invites-100-2025-03' });
    const rows = visible(feed(passBatchesProjection, log.events));
    expect(Object.keys(rows)).to.deep.equal(['batch-1']);
    expect(rows['batch-1']).to.include({
      link_hash: LINK,
      batch_size: 2,
      stream_name: 'guest-invites-100-2025-03',
      email_delivery: 'pending',
      sms_delivery: 'pending',
      valid_until: '2025-03-02T23:59:59.999Z',
    });
  });

  it('has no delivery for a channel without an address, an erased guest, or a batch from before the pass page', () => {
    const log = new EventLog();
    log.add(withLink(1, { guest: guest({ phone: null }) }));
    expect(visible(feed(passBatchesProjection, log.events))['batch-1']).to.include({ email_delivery: 'pending', sms_delivery: null });
    const erased = new EventLog();
    erased.add(withLink(1, { guest: null }));
    expect(visible(feed(passBatchesProjection, erased.events))['batch-1']).to.include({ email_delivery: null, sms_delivery: null });
    const old = new EventLog();
    old.add(passCreated(3, { batchId: 'batch-1' }));
    expect(visible(feed(passBatchesProjection, old.events))['batch-1']).to.include({ link_hash: null, email_delivery: null });
  });

  it('follows the outcomes: a transient failure stays pending, a success is final, a final failure fails', () => {
    const log = new EventLog();
    log.add(withLink(1));
    log.add(outcome('PassDeliveryFailed', 'sms', 1));
    log.add(outcome('PassDeliverySucceeded', 'email', 1));
    expect(visible(feed(passBatchesProjection, log.events))['batch-1']).to.include({ email_delivery: 'sent', sms_delivery: 'pending' });
    log.add(outcome('PassDeliveryFailed', 'sms', 6, true));
    log.add(outcome('PassDeliveryFailed', 'email', 2, true));
    expect(visible(feed(passBatchesProjection, log.events))['batch-1']).to.include({ email_delivery: 'sent', sms_delivery: 'failed' });
  });

  it('ignores an outcome for a channel the guest had no address for', () => {
    const log = new EventLog();
    log.add(withLink(1, { guest: guest({ email: null }) }));
    log.add(outcome('PassDeliveryFailed', 'email', 1, true));
    expect(visible(feed(passBatchesProjection, log.events))['batch-1']).to.include({ email_delivery: null });
  });

  it('gives the same rows fed twice or one event at a time', () => {
    const log = new EventLog();
    log.add(withLink(1));
    log.add(withLink(2));
    log.add(outcome('PassDeliverySucceeded', 'email', 1));
    const once = visible(feed(passBatchesProjection, log.events));
    expect(visible(feed(passBatchesProjection, [...log.events, ...log.events]))).to.deep.equal(once);
    expect(visible(feedOneByOne(passBatchesProjection, log.events))).to.deep.equal(once);
  });
});
