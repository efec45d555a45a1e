import { expect } from 'chai';
import { passDeliveryDecider, ResendTooSoonError, type RecordDeliveryOutcomes, type ResendPassMessage } from '../../shared/domain/pass-delivery-decider.js';
import type { DeliveryDomainEvent } from '../../shared/domain/delivery-events.js';
import { isLastAttempt, MAX_DELIVERY_ATTEMPTS, nextAttemptAt, planDelivery, RETRY_DELAYS_MS } from '../../shared/domain/delivery-plan.js';
import { fold } from '../../shared/domain/decider.js';
import { deciderSpec } from '../support/given-when-then.js';

const batchId = '6f1c8a9e-2b7d-4c1e-9f3a-5d8e7b6a4c21';
const spec = deciderSpec(passDeliveryDecider);

const sent = (channel: 'email' | 'sms', attempt: number): DeliveryDomainEvent => ({
  type: 'PassDeliverySucceeded',
  data: { batchId, orgId: 1, channel, attempt, messageId: `<pass-${batchId}@example.test>`, providerMessageId: null },
});
const failed = (channel: 'email' | 'sms', attempt: number, final: boolean): DeliveryDomainEvent => ({
  type: 'PassDeliveryFailed',
  data: { batchId, orgId: 1, channel, attempt, errorClass: final ? 'recipient_refused' : 'provider_unavailable', final },
});
type Outcome = RecordDeliveryOutcomes['data']['attempts'][number]['outcome'];
const record = (channel: 'email' | 'sms', attempt: number, outcome: Outcome): RecordDeliveryOutcomes => ({
  type: 'RecordDeliveryOutcomes',
  data: { batchId, orgId: 1, round: 0, attempts: [{ channel, attempt, outcome }] },
});
const accepted = { kind: 'sent', messageId: `<pass-${batchId}@example.test>`, providerMessageId: null } as const;

describe('pass delivery decider', () => {
  it('records the first success of a channel', () => {
    spec.given([]).when(record('email', 1, accepted)).then([sent('email', 1)]);
  });

  it('records a transient failure and then the retry that succeeds', () => {
    spec.given([]).when(record('sms', 1, { kind: 'failed', errorClass: 'provider_unavailable', final: false })).then([failed('sms', 1, false)]);
    spec.given([failed('sms', 1, false)]).when(record('sms', 2, accepted)).then([sent('sms', 2)]);
  });

  it('records nothing more for a channel that succeeded or failed for good (a repeat after a crash)', () => {
    spec.given([sent('email', 1)]).when(record('email', 1, accepted)).thenNothing();
    spec.given([sent('email', 1)]).when(record('email', 2, accepted)).thenNothing();
    spec.given([failed('email', 1, true)]).when(record('email', 2, accepted)).thenNothing();
  });

  it('records nothing for an attempt number already recorded', () => {
    spec.given([failed('sms', 1, false)]).when(record('sms', 1, { kind: 'failed', errorClass: 'provider_unavailable', final: false })).thenNothing();
  });

  it('records a round of both channels in one go, leaving out what is already settled', () => {
    const round: RecordDeliveryOutcomes = {
      type: 'RecordDeliveryOutcomes',
      data: {
        batchId,
        orgId: 1,
        round: 0,
        attempts: [
          { channel: 'email', attempt: 2, outcome: accepted },
          { channel: 'sms', attempt: 2, outcome: { kind: 'failed', errorClass: 'provider_unavailable', final: false } },
        ],
      },
    };
    spec.given([failed('email', 1, false), failed('sms', 1, false)]).when(round).then([sent('email', 2), failed('sms', 2, false)]);
    spec.given([sent('email', 1), failed('sms', 1, false)]).when(round).then([failed('sms', 2, false)]);
  });

  it('keeps the channels apart', () => {
    spec.given([sent('email', 1)]).when(record('sms', 1, accepted)).then([sent('sms', 1)]);
    const state = fold(passDeliveryDecider, [sent('email', 1), failed('sms', 1, false)]);
    expect(state).to.deep.equal({ email: { status: 'sent', attempts: 1 }, sms: { status: 'pending', attempts: 1 }, round: 0, lastResendAt: null });
  });
});

describe('pass delivery decider: resending the guest\'s message', () => {
  const at = (iso: string) => new Date(iso);
  const resend = (now: string): ResendPassMessage => ({ type: 'ResendPassMessage', data: { batchId, orgId: 1, requestedBy: 7, now: at(now) } });
  const resent = (requestedAt: string): DeliveryDomainEvent => ({ type: 'PassMessageResendRequested', data: { batchId, orgId: 1, requestedBy: 7, requestedAt } });
  const inRound = (round: number, command: RecordDeliveryOutcomes): RecordDeliveryOutcomes => ({ ...command, data: { ...command.data, round } });

  it('allows the first resend, after the first delivery', () => {
    spec.given([sent('email', 1)]).when(resend('2026-12-01T09:00:00.000Z')).then([resent('2026-12-01T09:00:00.000Z')]);
  });

  it('refuses a second resend within 10 minutes, saying when the next may go', () => {
    spec.given([sent('email', 1), resent('2026-12-01T09:00:00.000Z')]).when(resend('2026-12-01T09:09:59.999Z')).thenThrows(ResendTooSoonError);
    const refused = spec.given([resent('2026-12-01T09:00:00.000Z')]).when(resend('2026-12-01T09:03:00.000Z')).thenThrows(ResendTooSoonError);
    expect(refused.status).to.equal(409);
    expect(refused.retryAt.toISOString()).to.equal('2026-12-01T09:10:00.000Z');
  });

  it('allows a resend once 10 minutes have passed since the last', () => {
    spec.given([resent('2026-12-01T09:00:00.000Z'), sent('email', 1)]).when(resend('2026-12-01T09:10:00.000Z')).then([resent('2026-12-01T09:10:00.000Z')]);
  });

  it('starts a new round: the channels are pending again and the new round\'s first attempt is recorded', () => {
    const state = fold(passDeliveryDecider, [sent('email', 1), resent('2026-12-01T09:00:00.000Z')]);
    expect(state).to.deep.equal({ email: { status: 'pending', attempts: 0 }, sms: { status: 'pending', attempts: 0 }, round: 1, lastResendAt: '2026-12-01T09:00:00.000Z' });
    spec.given([sent('email', 1), resent('2026-12-01T09:00:00.000Z')]).when(inRound(1, record('email', 1, accepted))).then([sent('email', 1)]);
  });

  it('does not take an outcome attempted before the resend for the new round', () => {
    spec.given([resent('2026-12-01T09:00:00.000Z')]).when(record('email', 1, accepted)).thenNothing();
  });
});

describe('delivery plan', () => {
  const pending = { email: { status: 'pending', attempts: 0 }, sms: { status: 'pending', attempts: 0 } } as const;
  const now = new Date('2026-12-01T09:00:00.000Z');
  const open = '2026-12-01T23:59:59.999Z';

  it('sends each channel the guest gave an address for, as the next attempt', () => {
    expect(planDelivery({ state: pending, contact: { email: true, phone: false }, validUntil: open, now })).to.deep.equal([
      { channel: 'email', attempt: 1, action: 'send' },
    ]);
    expect(
      planDelivery({ state: { ...pending, sms: { status: 'pending', attempts: 2 } }, contact: { email: true, phone: true }, validUntil: open, now }),
    ).to.deep.equal([
      { channel: 'email', attempt: 1, action: 'send' },
      { channel: 'sms', attempt: 3, action: 'send' },
    ]);
  });

  it('leaves settled channels alone', () => {
    const state = { email: { status: 'sent', attempts: 1 }, sms: { status: 'failed', attempts: 6 } } as const;
    expect(planDelivery({ state, contact: { email: true, phone: true }, validUntil: open, now })).to.deep.equal([]);
  });

  it('gives up on an erased guest and on a window that has ended, without sending', () => {
    expect(planDelivery({ state: pending, contact: null, validUntil: open, now })).to.deep.equal([
      { channel: 'email', attempt: 1, action: 'give_up', errorClass: 'guest_erased' },
      { channel: 'sms', attempt: 1, action: 'give_up', errorClass: 'guest_erased' },
    ]);
    expect(planDelivery({ state: pending, contact: { email: true, phone: false }, validUntil: '2026-12-01T08:59:59.999Z', now })).to.deep.equal([
      { channel: 'email', attempt: 1, action: 'give_up', errorClass: 'pass_expired' },
    ]);
  });

  it('retries after about 1 s, 10 s, 1 min, 10 min and 1 h, then the last transient failure is final', () => {
    expect(RETRY_DELAYS_MS).to.deep.equal([1_000, 10_000, 60_000, 600_000, 3_600_000]);
    expect([1, 2, 3, 4, 5].map((a) => nextAttemptAt(a, now).getTime() - now.getTime())).to.deep.equal(RETRY_DELAYS_MS);
    expect(MAX_DELIVERY_ATTEMPTS).to.equal(6);
    expect([5, 6].map(isLastAttempt)).to.deep.equal([false, true]);
  });
});
