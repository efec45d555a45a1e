// An OutgoingMail as it travels: the RFC 5322 message itself (CRLF line ends) and its SMTP
// envelope, for the SMTP transport (sent as is) and the outbox's `.eml` files alike.
//
// The headers are nodemailer's own (MimeNode: address parsing and punycode, encoded words,
// folding, the stable Message-ID, Date, the multipart boundary), so they read exactly as
// nodemailer writes them; the two parts (text, HTML) are encoded here in one go, without
// nodemailer's stream pipeline. That pipeline cost about five times the CPU of this, and wrote
// the message to the SMTP socket in dozens of small writes instead of one: a busy service sends
// an email per batch of passes.
import MimeNode from 'nodemailer/lib/mime-node';
import { encode as encodeQuotedPrintable, wrap as wrapQuotedPrintable } from 'nodemailer/lib/qp';
import type { OutgoingMail } from './delivery-ports.js';

export interface RawMail {
  /** The message, CRLF line ends. */
  readonly raw: Buffer;
  /** SMTP envelope: MAIL FROM and RCPT TO addresses (none when the recipient's address is unusable). */
  readonly envelope: { readonly from: string; readonly to: string[] };
}

/** Lines longer than this are encoded (RFC 5322 asks for 78 at most; quoted-printable wraps at 76). */
const MAX_LINE = 76;

function crlf(text: string): string {
  return text.replace(/\r?\n/g, '\r\n');
}

/** A leaf part: 7bit when every line is short ASCII (as nodemailer picks), else quoted-printable. */
function part(contentType: string, text: string): string {
  const lines = crlf(text);
  const plain = !/[^\x09\x0a\x0d\x20-\x7e]/.test(lines) && lines.split('\r\n').every((line) => line.length <= MAX_LINE);
  const body = plain ? lines : wrapQuotedPrintable(encodeQuotedPrintable(Buffer.from(lines, 'utf8')), MAX_LINE);
  return `Content-Type: ${contentType}; charset=utf-8\r\nContent-Transfer-Encoding: ${plain ? '7bit' : 'quoted-printable'}\r\n\r\n${body}`;
}

/** The message (multipart/alternative: text, then HTML) and its envelope. */
export function composeRawMail(mail: OutgoingMail): RawMail {
  const root = new MimeNode('multipart/alternative', { newline: '\r\n', disableFileAccess: true, disableUrlAccess: true });
  root.setHeader('From', mail.from);
  // An address object, not a string: nodemailer would split `a@x, b@y` into two recipients.
  root.setHeader('To', { name: '', address: mail.to });
  root.setHeader('Subject', mail.subject);
  // The same for every attempt: a retry after a lost reply is recognisably the same message.
  root.setHeader('Message-ID', mail.messageId);
  const headers = root.buildHeaders();
  const boundary = root.boundary;
  if (typeof boundary !== 'string' || boundary === '') throw new Error('nodemailer built no multipart boundary');
  const raw =
    `${headers}\r\n\r\n` +
    `--${boundary}\r\n${part('text/plain', mail.text)}\r\n` +
    `--${boundary}\r\n${part('text/html', mail.html)}\r\n` +
    `--${boundary}--\r\n`;
  const envelope = root.getEnvelope();
  return { raw: Buffer.from(raw, 'utf8'), envelope: { from: envelope.from || '', to: [...envelope.to] } };
}

/** The message as it would travel (CRLF line ends), for the outbox's `.eml` files and for tests. */
export async function renderRawMail(mail: OutgoingMail): Promise<Buffer> {
  return composeRawMail(mail).raw;
}
