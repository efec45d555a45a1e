// The ports of pass delivery (issue 15): what the delivery reactor hands a channel, and what it
// gets back. A guest gets one email and/or one SMS per batch of passes, each carrying one link to
// the batch's pass page. Adapters: SMTP (smtp-mail-sender.ts), a JSON webhook
// (sms-webhook-sender.ts), Twilio (twilio-sms-sender.ts) and the outbox folder (outbox.ts);
// create-senders.ts picks them from the configuration.
import type { DeliveryErrorClass } from '../domain/delivery-events.js';

export interface OutgoingMail {
  readonly to: string;
  readonly from: string;
  readonly subject: string;
  readonly text: string;
  readonly html: string;
  /** RFC 5322 Message-ID with angle brackets, stable per batch */
  readonly messageId: string;
  /** The page the message leads to (the pass page): what the outbox records beside it, never read from the text. */
  readonly link: string;
}

export interface OutgoingSms {
  readonly to: string;
  readonly text: string;
  /** stable per batch: the receiver drops a repeat */
  readonly idempotencyKey: string;
  /** As OutgoingMail's link. */
  readonly link: string;
}

export interface SendReceipt {
  /** what the provider called the accepted message, when it said (SMTP response line trimmed to 200 chars, Twilio sid, webhook's `id` field) */
  readonly providerMessageId: string | null;
}

export interface MailSender {
  readonly kind: 'smtp' | 'outbox';
  send(mail: OutgoingMail): Promise<SendReceipt>;
  close(): Promise<void>;
}

export interface SmsSender {
  readonly kind: 'webhook' | 'twilio' | 'outbox';
  send(sms: OutgoingSms): Promise<SendReceipt>;
  close(): Promise<void>;
}

/** The error classes a channel itself reports; `guest_erased` and `pass_expired` are the reactor's. */
export type SendErrorClass = Extract<DeliveryErrorClass, 'recipient_refused' | 'provider_rejected' | 'provider_unavailable'>;

/**
 * A refused send. permanent: a retry would be refused too. Message never contains the recipient or
 * the provider's raw text.
 */
export class DeliveryFailure extends Error {
  override readonly name = 'DeliveryFailure';
  constructor(
    readonly errorClass: SendErrorClass,
    readonly permanent: boolean,
    message: string,
  ) {
    super(message);
  }
}

/** A provider's own name for a message, as the events keep it (at most 200 characters). */
export function providerMessageId(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const trimmed = value.trim().slice(0, 200).trim();
  return trimmed === '' ? null : trimmed;
}
