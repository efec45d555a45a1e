// One batch's delivery (stream `pass-delivery-{batchId}`): the outcome of each attempt on each
// channel, recorded at most once. The reactor may run in several processes and may repeat an
// attempt after a crash; the expected revision of this stream and the rules below make every
// repeat a no-op: nothing is recorded for a channel that already succeeded or failed for good,
// nor for an attempt number already recorded.
import type { Decider } from './decider.js';
import type { DeliveryChannel, DeliveryDomainEvent, DeliveryErrorClass } from './delivery-events.js';

/** What is known of one channel: `pending` until a success or a final failure. */
export interface ChannelDelivery {
  readonly status: 'pending' | 'sent' | 'failed';
  /** Attempts recorded so far. */
  readonly attempts: number;
}

export type PassDeliveryState = Readonly<Record<DeliveryChannel, ChannelDelivery>>;

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
  data: { batchId: string; orgId: number; attempts: readonly ChannelAttempt[] };
};

const PENDING: ChannelDelivery = { status: 'pending', attempts: 0 };

/** True once a channel needs no further attempt. */
export function channelSettled(state: PassDeliveryState, channel: DeliveryChannel): boolean {
  return state[channel].status !== 'pending';
}

export const passDeliveryDecider: Decider<RecordDeliveryOutcomes, DeliveryDomainEvent, PassDeliveryState> = {
  initialState: () => ({ email: PENDING, sms: PENDING }),

  evolve(state, event) {
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

  decide({ data }, state) {
    const { batchId, orgId } = data;
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
