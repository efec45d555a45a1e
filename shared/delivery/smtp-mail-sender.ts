// The SMTP adapter of the mail port: one pool of SMTP connections per sender (create one sender
// per process; smtp-connection-pool.ts, over nodemailer's SMTPConnection), from SMTP_URL. Messages
// are composed here (raw-mail.ts) and handed over whole. `smtp://` connects in plain text and upgrades with STARTTLS
// when the server offers it; `smtps://` is TLS from the first byte (nodemailer's URL handling:
// the scheme sets `secure`). Certificates are verified as Node does by default; only an explicit
// `tls` option (tests) changes that.
//
// A refusal becomes a DeliveryFailure whose message names the SMTP command, reply code and error
// code, never the recipient or the server's text (a log line carries the message).
import type { ConnectionOptions } from 'node:tls';
import { DeliveryFailure, providerMessageId, type MailSender, type OutgoingMail, type SendReceipt } from './delivery-ports.js';
import { composeRawMail } from './raw-mail.js';
import { SmtpConnectionPool } from './smtp-connection-pool.js';

export interface SmtpMailSenderOptions {
  /** Bound on connecting, on the greeting and on a silent socket (default 10 s): a dead server never hangs a send. */
  readonly timeoutMs?: number;
  /** Bound on one whole send, queueing in the pool included (default 60 s). */
  readonly sendTimeoutMs?: number;
  /** Open connections at most (default 2). */
  readonly maxConnections?: number;
  /** tls.connect options; for tests only (a self-signed test server's CA). Production uses Node's defaults. */
  readonly tls?: ConnectionOptions;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_SEND_TIMEOUT_MS = 60_000;

/** The parts of a nodemailer error this module reads. */
interface SmtpError {
  readonly code?: unknown;
  readonly responseCode?: unknown;
  readonly command?: unknown;
}

/** Node's own network error codes, which nodemailer sometimes passes through unchanged. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNABORTED']);
/** nodemailer's codes for a connection that failed or ended, or a send given up on: worth a retry. */
const TRANSIENT_CODES = new Set(['ECONNECTION', 'ETIMEDOUT', 'ESOCKET', 'EDNS', 'ETLS', 'EPROXY', 'EABORT', 'EMAXLIMIT', 'EPROTOCOL']);
/** nodemailer's codes for a configuration the server will keep refusing: no reply code, still permanent. */
const CONFIG_CODES = new Set(['EAUTH', 'ENOAUTH', 'EOAUTH2', 'ECONFIG', 'EREQUIRETLS']);

function describe(error: SmtpError, responseCode: number | null): string {
  const parts = [typeof error.command === 'string' ? error.command : null, responseCode, typeof error.code === 'string' ? error.code : null];
  return parts.filter((p) => p !== null).join(' ');
}

/**
 * Maps a nodemailer error to a DeliveryFailure:
 * - 5xx to RCPT TO (or an address nodemailer refuses itself): recipient_refused, permanent;
 * - any other 5xx (MAIL FROM, DATA, AUTH): provider_rejected, permanent; so are refused credentials;
 * - 4xx, and 503 (bad sequence: a new connection may do), connection refused or reset, time-outs:
 *   provider_unavailable, transient.
 * An error that is not nodemailer's (a bug) is returned as is: the reactor treats it as transient.
 */
export function classifySmtpError(error: unknown): Error {
  if (error instanceof DeliveryFailure) return error;
  if (typeof error !== 'object' || error === null) return new Error(String(error));
  const e = error as SmtpError;
  const code = typeof e.code === 'string' ? e.code : null;
  const responseCode = typeof e.responseCode === 'number' ? e.responseCode : null;
  const what = describe(e, responseCode);
  if (responseCode !== null && responseCode >= 500 && responseCode < 600 && responseCode !== 503) {
    if (e.command === 'RCPT TO') return new DeliveryFailure('recipient_refused', true, `SMTP server refused the recipient (${what})`);
    return new DeliveryFailure('provider_rejected', true, `SMTP server rejected the message (${what})`);
  }
  if (responseCode !== null && responseCode >= 400 && responseCode < 600) {
    return new DeliveryFailure('provider_unavailable', false, `SMTP server deferred the message (${what})`);
  }
  // nodemailer refuses an address it cannot use before any server sees it.
  if (code === 'EENVELOPE' && e.command === 'API') return new DeliveryFailure('recipient_refused', true, `the address was refused before sending (${what})`);
  if (code !== null && CONFIG_CODES.has(code)) return new DeliveryFailure('provider_rejected', true, `SMTP server refused the configuration (${what})`);
  if (code !== null && (TRANSIENT_CODES.has(code) || NETWORK_CODES.has(code))) {
    return new DeliveryFailure('provider_unavailable', false, `SMTP server unavailable (${what})`);
  }
  if (error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError')) {
    return new DeliveryFailure('provider_unavailable', false, 'SMTP send timed out');
  }
  return error instanceof Error ? error : new Error(String(error));
}

export class SmtpMailSender implements MailSender {
  readonly kind = 'smtp' as const;
  private readonly pool: SmtpConnectionPool;
  private readonly sendTimeoutMs: number;

  constructor(smtpUrl: string, options: SmtpMailSenderOptions = {}) {
    const timeout = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.sendTimeoutMs = options.sendTimeoutMs ?? DEFAULT_SEND_TIMEOUT_MS;
    // host, port, secure (smtps:) and auth (user:pass) come from the URL.
    this.pool = new SmtpConnectionPool(smtpUrl, {
      maxConnections: options.maxConnections ?? 2,
      connection: {
        connectionTimeout: timeout,
        greetingTimeout: timeout,
        socketTimeout: timeout,
        dnsTimeout: timeout,
        ...(options.tls ? { tls: options.tls } : {}),
      },
    });
  }

  async send(mail: OutgoingMail): Promise<SendReceipt> {
    try {
      // Composed here in one piece (the stable Message-ID in it: a retry after a lost reply is
      // recognisably the same message) and written to the connection as is.
      const { raw, envelope } = composeRawMail(mail);
      // nodemailer refuses an address it cannot use before any server sees it.
      if (envelope.to.length === 0) throw new DeliveryFailure('recipient_refused', true, 'the address was refused before sending (API EENVELOPE)');
      const info = await this.pool.send(envelope, raw, this.sendTimeoutMs);
      return { providerMessageId: providerMessageId(info.response) };
    } catch (error) {
      throw classifySmtpError(error);
    }
  }

  async close(): Promise<void> {
    this.pool.close();
  }
}
