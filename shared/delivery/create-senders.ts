// Picks the adapters of the two channels from the configuration: SMTP_URL, else the outbox
// folder; SMS_PROVIDER=twilio, SMS_URL (webhook), else the outbox folder. Call it once per
// process: the SMTP sender holds the process's one connection pool.
import type { Config } from '../config.js';
import type { MailSender, SmsSender } from './delivery-ports.js';
import { OutboxFolder, OutboxMailSender, OutboxSmsSender, outboxDir } from './outbox.js';
import { defaultMailFrom } from './pass-message.js';
import { SmsWebhookSender } from './sms-webhook-sender.js';
import { SmtpMailSender } from './smtp-mail-sender.js';
import { TwilioSmsSender } from './twilio-sms-sender.js';

export interface DeliverySenders {
  readonly mail: MailSender;
  readonly sms: SmsSender;
  /** MAIL_FROM, else `Guest Pass <no-reply@{host}>`. */
  readonly mailFrom: string;
  /** One line for the start-up banner; no credentials in it. */
  describe(): string;
}

/** A URL to print: scheme, host, port and path; no user, password, query or fragment. */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname}`;
  } catch {
    return '(unparsable URL)';
  }
}

/**
 * @param baseUrl the address guests reach the service at (PUBLIC_BASE_URL, else the embedded
 * default): the host of the default sender address.
 */
export function createDeliverySenders(config: Pick<Config, 'mail' | 'sms' | 'dataDir' | 'publicBaseUrl'>, baseUrl: string): DeliverySenders {
  const folder = new OutboxFolder(outboxDir(config.dataDir));
  const mailFrom = config.mail?.from ?? defaultMailFrom(config.publicBaseUrl ?? baseUrl);
  const mail: MailSender = config.mail ? new SmtpMailSender(config.mail.smtpUrl) : new OutboxMailSender(folder);
  const sms: SmsSender =
    config.sms === null ? new OutboxSmsSender(folder)
    : config.sms.provider === 'twilio' ? new TwilioSmsSender(config.sms)
    : new SmsWebhookSender({ url: config.sms.url, authToken: config.sms.authToken });

  const mailLine = config.mail ? `mail: smtp ${displayUrl(config.mail.smtpUrl)} from ${mailFrom}` : `mail: outbox ${folder.dir}`;
  const smsLine =
    config.sms === null ? `sms: outbox ${folder.dir}`
    : config.sms.provider === 'twilio' ? `sms: twilio ${displayUrl(config.sms.baseUrl)} from ${config.sms.from}`
    : `sms: webhook ${displayUrl(config.sms.url)}`;
  return { mail, sms, mailFrom, describe: () => `${mailLine}; ${smsLine}` };
}
