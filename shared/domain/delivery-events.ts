// Events of pass delivery (issue 15), part of the DomainEvent union in events.ts. They live on the
// batch's own stream `pass-delivery-{batchId}` (`streams.passDelivery`): the delivery reactor's
// consistency boundary, so that an outcome is recorded once per channel and attempt whatever
// the number of reactor processes. No recipient appears in them: the address is in the batch's
// sealed guest data only.
import type { AnySchemaObject } from 'ajv/dist/2020.js';

export type DeliveryChannel = 'email' | 'sms';
export const DELIVERY_CHANNELS: readonly DeliveryChannel[] = ['email', 'sms'];

/** Why an attempt failed, as far as a host or an operator needs to know (never the provider's text). */
export type DeliveryErrorClass =
  | 'recipient_refused' // the provider refused this recipient (SMTP 5xx on RCPT, webhook 4xx)
  | 'provider_rejected' // the provider refused the message for another permanent reason
  | 'provider_unavailable' // 5xx, network error, time-out: transient
  | 'guest_erased' // the guest's data key is gone: nothing left to send
  | 'pass_expired'; // the window ended before a message got through
export const DELIVERY_ERROR_CLASSES: readonly DeliveryErrorClass[] = [
  'recipient_refused',
  'provider_rejected',
  'provider_unavailable',
  'guest_erased',
  'pass_expired',
];

export type PassDeliverySucceeded = {
  type: 'PassDeliverySucceeded';
  data: {
    batchId: string;
    orgId: number;
    channel: DeliveryChannel;
    /** 1 for the first try. */
    attempt: number;
    /** Ours, stable across retries (the email's Message-ID, the SMS idempotency key). */
    messageId: string;
    /** What the provider called the accepted message, when it said. */
    providerMessageId: string | null;
  };
};

export type PassDeliveryFailed = {
  type: 'PassDeliveryFailed';
  data: {
    batchId: string;
    orgId: number;
    channel: DeliveryChannel;
    attempt: number;
    errorClass: DeliveryErrorClass;
    /** True when no further attempt follows (a permanent refusal, or the retries are spent). */
    final: boolean;
  };
};

/**
 * A host asked for the guest's message to be sent again (same link): a new round of delivery on
 * the batch's stream, whose channels start pending again. On the delivery stream itself, so that
 * the 10-minute rule and the rounds share one expected revision.
 */
export type PassMessageResendRequested = {
  type: 'PassMessageResendRequested';
  data: {
    batchId: string;
    orgId: number;
    /** The signed-in user who asked (also in the metadata's actor). */
    requestedBy: number;
    /** ISO 8601: the 10-minute rule counts from here. */
    requestedAt: string;
  };
};

export type DeliveryDomainEvent = PassDeliverySucceeded | PassDeliveryFailed | PassMessageResendRequested;
export type DeliveryDomainEventType = DeliveryDomainEvent['type'];

type PropertiesOf<D> = { readonly [K in keyof D]-?: AnySchemaObject };
type DataOf<T extends DeliveryDomainEventType> = Extract<DeliveryDomainEvent, { type: T }>['data'];

const ID = { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER };
const BATCH_ID = { type: 'string', format: 'uuid' };
const CHANNEL = { type: 'string', enum: [...DELIVERY_CHANNELS] };
const ATTEMPT = { type: 'integer', minimum: 1, maximum: 100 };

export const deliveryEventCatalogue: {
  readonly [T in DeliveryDomainEventType]: { readonly version: number; readonly properties: PropertiesOf<DataOf<T>> };
} = {
  PassDeliverySucceeded: {
    version: 1,
    properties: {
      batchId: BATCH_ID,
      orgId: ID,
      channel: CHANNEL,
      attempt: ATTEMPT,
      messageId: { type: 'string', minLength: 1, maxLength: 200 },
      providerMessageId: { type: ['string', 'null'], maxLength: 200 },
    },
  },
  PassDeliveryFailed: {
    version: 1,
    properties: {
      batchId: BATCH_ID,
      orgId: ID,
      channel: CHANNEL,
      attempt: ATTEMPT,
      errorClass: { type: 'string', enum: [...DELIVERY_ERROR_CLASSES] },
      final: { type: 'boolean' },
    },
  },
  PassMessageResendRequested: {
    version: 1,
    properties: {
      batchId: BATCH_ID,
      orgId: ID,
      requestedBy: ID,
      requestedAt: { type: 'string', format: 'date-time' },
    },
  },
};
