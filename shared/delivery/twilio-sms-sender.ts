// SMS_PROVIDER=twilio: Twilio's Messages API.
//
//   POST {baseUrl}/2010-04-01/Accounts/{AccountSid}/Messages.json
//   Authorization: Basic base64(AccountSid:AuthToken)
//   Content-Type: application/x-www-form-urlencoded      To, From, Body
//
// 2xx: accepted, providerMessageId = the JSON `sid`. 400 with one of Twilio's error codes for a
// number that cannot receive (RECIPIENT_ERROR_CODES): recipient_refused, permanent; any other 4xx
// (bad credentials, unknown account, a sender not allowed): provider_rejected, permanent; 408,
// 429, 5xx, network errors and time-outs: provider_unavailable, transient. Twilio has no
// idempotency key: a retry after a lost reply may send a second SMS.
import { DeliveryFailure, providerMessageId, type OutgoingSms, type SendReceipt, type SmsSender } from './delivery-ports.js';
import { DEFAULT_HTTP_TIMEOUT_MS, isTransientStatus, postForReply } from './http-send.js';

/**
 * Twilio error codes that are about the `To` number (https://www.twilio.com/docs/api/errors):
 * 21211 invalid To, 21214 To cannot be reached, 21217 not a valid number, 21401 invalid number,
 * 21407 number type cannot receive SMS, 21421 invalid PhoneNumber, 21610 recipient unsubscribed
 * (STOP), 21612 To not reachable by SMS, 21614 To is not a mobile number.
 */
export const RECIPIENT_ERROR_CODES: ReadonlySet<number> = new Set([21211, 21214, 21217, 21401, 21407, 21421, 21610, 21612, 21614]);

export interface TwilioSmsSenderOptions {
  /** Twilio's API base (TWILIO_API_BASE), or SMS_URL for a compatible endpoint. */
  readonly baseUrl: string;
  readonly accountSid: string;
  readonly authToken: string;
  /** SMS_FROM: a Twilio number or a Messaging Service's sender. */
  readonly from: string;
  readonly timeoutMs?: number;
}

export class TwilioSmsSender implements SmsSender {
  readonly kind = 'twilio' as const;

  constructor(private readonly options: TwilioSmsSenderOptions) {}

  async send(sms: OutgoingSms): Promise<SendReceipt> {
    const { baseUrl, accountSid, authToken, from } = this.options;
    const url = `${baseUrl.replace(/\/+$/, '')}/2010-04-01/Accounts/${encodeURIComponent(accountSid)}/Messages.json`;
    const reply = await postForReply(
      'Twilio',
      url,
      {
        headers: {
          Authorization: `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`,
          'Content-Type': 'application/x-www-form-urlencoded',
          Accept: 'application/json',
        },
        body: new URLSearchParams({ To: sms.to, From: from, Body: sms.text }).toString(),
      },
      this.options.timeoutMs ?? DEFAULT_HTTP_TIMEOUT_MS,
    );
    const { status, json } = reply;
    if (status >= 200 && status < 300) {
      const sid = typeof json === 'object' && json !== null ? (json as { sid?: unknown }).sid : undefined;
      return { providerMessageId: providerMessageId(sid) };
    }
    if (isTransientStatus(status)) throw new DeliveryFailure('provider_unavailable', false, `Twilio answered ${status}`);
    const code = typeof json === 'object' && json !== null ? (json as { code?: unknown }).code : undefined;
    const twilioCode = typeof code === 'number' ? code : null;
    const what = twilioCode === null ? `${status}` : `${status}, Twilio error ${twilioCode}`;
    if (status === 400 && twilioCode !== null && RECIPIENT_ERROR_CODES.has(twilioCode)) {
      throw new DeliveryFailure('recipient_refused', true, `Twilio refused the recipient (${what})`);
    }
    throw new DeliveryFailure('provider_rejected', true, `Twilio rejected the message (${what})`);
  }

  async close(): Promise<void> {}
}
