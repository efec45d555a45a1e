// One batch's delivery (stream `pass-delivery-{batchId}`): the outcome of each attempt on each
// channel, recorded at most once. The reactor may run in several processes and may repeat an
// attempt after a crash; the expected revision of this stream and the rules below make every
// repeat a no-op: nothing is recorded for a channel that already succeeded or failed for good,
// nor for an attempt number already recorded.
//
// A host may ask for the message again (ResendPassMessage, at most once per 10 minutes): that
// starts a new round, in which every channel is pending again with its attempts counted afresh.
// Outcomes name the round they were attempted in, so one attempted before a resend is not taken
// for the new round's (the store's retry after a lost race decides again on the newer state).
import type { Decider } from './decider.js';
import { ConflictError } from '../errors.js';
import type { DeliveryChannel, DeliveryDomainEvent, DeliveryErrorClass } from './delivery-events.js';

/** What is known of one channel: `pending` until a success or a final failure. */
export interface ChannelDelivery {
  readonly status: 'pending' | 'sent' | 'failed';
  /** Attempts recorded so far. */
  readonly attempts: number;
}

export type PassDeliveryState = Readonly<Record<DeliveryChannel, ChannelDelivery>> & {
  /** 0 for the first delivery, n after the n-th resend. */
  readonly round: number;
  /** When the last resend was asked for (ISO 8601), null before any. */
  readonly lastResendAt: string | null;
};

/** The shortest time between two resends of one batch's message. */
export const RESEND_INTERVAL_MS = 10 * 60_000;

export type DeliveryOutcome =
  | { readonly kind: 'sent'; readonly messageId: string; readonly providerMessageId: string | null }
  | { readonly kind: 'failed'; readonly errorClass: DeliveryErrorClass; readonly final: boolean };

export interface ChannelAttempt {
  readonly channel: DeliveryChannel;
  readonly attempt: number;
  readonly outcome: DeliveryOutcome;
}

/** The outcomes of one round of attempts (one per channel), recorded in one append. */
export type RecordDeliveryOutcomes = {
  type: 'RecordDeliveryOutcomes';
  /** `round`: the round the attempts belong to (the state's when the stream was read). */
  data: { batchId: string; orgId: number; round: number; attempts: readonly ChannelAttempt[] };
};

/** A host asks for the guest's message again (same link); refused within RESEND_INTERVAL_MS of the last ask. */
export type ResendPassMessage = {
  type: 'ResendPassMessage';
  data: { batchId: string; orgId: number; requestedBy: number; now: Date };
};

/** When the next resend may be asked for (null: now). */
export function nextResendAt(state: PassDeliveryState): Date | null {
  if (state.lastResendAt === null) return null;
  return new Date(Date.parse(state.lastResendAt) + RESEND_INTERVAL_MS);
}

/** Refused while the last resend is younger than the interval: carries when the next may go. */
export class ResendTooSoonError extends ConflictError {
  constructor(readonly retryAt: Date) {
    super('the message was resent less than 10 minutes ago');
  }
}

const PENDING: ChannelDelivery = { status: 'pending', attempts: 0 };

/** True once a channel needs no further attempt. */
export function channelSettled(state: PassDeliveryState, channel: DeliveryChannel): boolean {
  return state[channel].status !== 'pending';
}

export const passDeliveryDecider: Decider<RecordDeliveryOutcomes | ResendPassMessage, DeliveryDomainEvent, PassDeliveryState> = {
  initialState: () => ({ email: PENDING, sms: PENDING, round: 0, lastResendAt: null }),

  evolve(state, event) {
    if (event.type === 'PassMessageResendRequested') {
      return { email: PENDING, sms: PENDING, round: state.round + 1, lastResendAt: event.data.requestedAt };
    }
    if (event.type !== 'PassDeliverySucceeded' && event.type !== 'PassDeliveryFailed') return state;
    const { channel, attempt } = event.data;
    const attempts = Math.max(state[channel].attempts, attempt);
    switch (event.type) {
      case 'PassDeliverySucceeded':
        return { ...state, [channel]: { status: 'sent', attempts } };
      case 'PassDeliveryFailed':
        return { ...state, [channel]: { status: event.data.final ? 'failed' : 'pending', attempts } };
      default:
        return state;
    }
  },

  decide(command, state) {
    if (command.type === 'ResendPassMessage') {
      const { batchId, orgId, requestedBy, now } = command.data;
      const retryAt = nextResendAt(state);
      if (retryAt && retryAt.getTime() > now.getTime()) throw new ResendTooSoonError(retryAt);
      return [{ type: 'PassMessageResendRequested', data: { batchId, orgId, requestedBy, requestedAt: now.toISOString() } }];
    }
    const { data } = command;
    const { batchId, orgId } = data;
    // Attempted in an earlier round (a resend came in meanwhile): the new round sends afresh.
    if (data.round !== state.round) return [];
    return data.attempts.flatMap(({ channel, attempt, outcome }): DeliveryDomainEvent[] => {
      if (channelSettled(state, channel) || attempt <= state[channel].attempts) return [];
      if (outcome.kind === 'sent') {
        return [
          {
            type: 'PassDeliverySucceeded',
            data: { batchId, orgId, channel, attempt, messageId: outcome.messageId, providerMessageId: outcome.providerMessageId },
          },
        ];
      }
      return [{ type: 'PassDeliveryFailed', data: { batchId, orgId, channel, attempt, errorClass: outcome.errorClass, final: outcome.final } }];
    });
  },
};
