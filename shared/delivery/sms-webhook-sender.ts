// The default SMS adapter (SMS_PROVIDER=webhook, SMS_URL): one JSON POST per message to a gateway
// of the operator's choice.
//
//   POST {SMS_URL}
//   Content-Type: application/json
//   Authorization: Bearer {SMS_AUTH_TOKEN}          (only when set)
//   {"to": "+15551234567", "text": "...", "idempotency_key": "pass-{batchId}-sms"}
//
// The idempotency key is the same on every attempt for a batch: the receiver drops a repeat.
// How the reply is read:
//   2xx                  accepted; providerMessageId = the JSON body's string `id` or `message_id`, else null
//   400, 404, 422        recipient_refused, permanent (the gateway refuses this number)
//   401, 403, other 4xx  provider_rejected, permanent (our credentials or request are wrong)
//   408, 429, 5xx        provider_unavailable, transient
//   network error, no answer within the time-out (10 s): provider_unavailable, transient
//   3xx (not followed)   provider_rejected, permanent: SMS_URL should name the final address
import { DeliveryFailure, providerMessageId, type OutgoingSms, type SendReceipt, type SmsSender } from './delivery-ports.js';
import { DEFAULT_HTTP_TIMEOUT_MS, isTransientStatus, postForReply, stringField } from './http-send.js';

const RECIPIENT_STATUSES = new Set([400, 404, 422]);

export interface SmsWebhookSenderOptions {
  readonly url: string;
  /** Sent as `Authorization: Bearer {authToken}` when not null. */
  readonly authToken: string | null;
  readonly timeoutMs?: number;
}

export class SmsWebhookSender implements SmsSender {
  readonly kind = 'webhook' as const;

  constructor(private readonly options: SmsWebhookSenderOptions) {}

  async send(sms: OutgoingSms): Promise<SendReceipt> {
    const headers: Record<string, string> = { 'Content-Type': 'application/json', Accept: 'application/json' };
    if (this.options.authToken !== null) headers.Authorization = `Bearer ${this.options.authToken}`;
    const reply = await postForReply(
      'SMS webhook',
      this.options.url,
      { headers, body: JSON.stringify({ to: sms.to, text: sms.text, idempotency_key: sms.idempotencyKey }) },
      this.options.timeoutMs ?? DEFAULT_HTTP_TIMEOUT_MS,
    );
    const { status } = reply;
    if (status >= 200 && status < 300) return { providerMessageId: providerMessageId(stringField(reply.json, 'id', 'message_id')) };
    if (isTransientStatus(status)) throw new DeliveryFailure('provider_unavailable', false, `SMS webhook answered ${status}`);
    if (RECIPIENT_STATUSES.has(status)) throw new DeliveryFailure('recipient_refused', true, `SMS webhook refused the recipient (${status})`);
    throw new DeliveryFailure('provider_rejected', true, `SMS webhook rejected the message (${status})`);
  }

  async close(): Promise<void> {
    // fetch keeps no connection of ours open beyond its keep-alive pool.
  }
}
