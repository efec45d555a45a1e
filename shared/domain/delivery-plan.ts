// What the delivery worker does with a batch when it comes due: pure, so the retry schedule and
// the rules for erased guests and ended windows are unit-tested without I/O.
import type { DeliveryChannel, DeliveryErrorClass } from './delivery-events.js';
import type { PassDeliveryState } from './pass-delivery-decider.js';

/** Pauses after the failed attempt n (index n - 1): about 1 s, 10 s, 1 min, 10 min, 1 h. */
export const RETRY_DELAYS_MS: readonly number[] = [1_000, 10_000, 60_000, 600_000, 3_600_000];
/** The first attempt and one per pause: a transient failure of the last one is final. */
export const MAX_DELIVERY_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

export interface DeliveryFacts {
  readonly state: Pick<PassDeliveryState, 'email' | 'sms'>;
  /** null when the guest's data key is gone (erased): nothing can be read, nothing is sent. */
  readonly contact: { readonly email: boolean; readonly phone: boolean } | null;
  readonly validUntil: string;
  readonly now: Date;
}

export type PlannedStep =
  | { readonly channel: DeliveryChannel; readonly attempt: number; readonly action: 'send' }
  | { readonly channel: DeliveryChannel; readonly attempt: number; readonly action: 'give_up'; readonly errorClass: DeliveryErrorClass };

const CONTACT_OF: Readonly<Record<DeliveryChannel, 'email' | 'phone'>> = { email: 'email', sms: 'phone' };

/** The steps of this attempt, one per channel still pending that the guest gave an address for. */
export function planDelivery({ state, contact, validUntil, now }: DeliveryFacts): PlannedStep[] {
  const steps: PlannedStep[] = [];
  for (const channel of ['email', 'sms'] as const) {
    const known = state[channel];
    if (known.status !== 'pending') continue;
    const attempt = known.attempts + 1;
    if (contact === null) {
      // Which channels the guest had is sealed with the gone key; record both as given up.
      steps.push({ channel, attempt, action: 'give_up', errorClass: 'guest_erased' });
    } else if (!contact[CONTACT_OF[channel]]) {
      continue;
    } else if (Date.parse(validUntil) <= now.getTime()) {
      steps.push({ channel, attempt, action: 'give_up', errorClass: 'pass_expired' });
    } else {
      steps.push({ channel, attempt, action: 'send' });
    }
  }
  return steps;
}

/** True when a transient failure at this attempt is the last one. */
export function isLastAttempt(attempt: number): boolean {
  return attempt >= MAX_DELIVERY_ATTEMPTS;
}

/** When to try again after a transient failure at `attempt`. */
export function nextAttemptAt(attempt: number, now: Date): Date {
  const delay = RETRY_DELAYS_MS[Math.min(attempt, RETRY_DELAYS_MS.length) - 1] ?? RETRY_DELAYS_MS.at(-1)!;
  return new Date(now.getTime() + delay);
}
