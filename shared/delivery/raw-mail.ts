// An OutgoingMail as nodemailer sends it: the options both the SMTP transport and the outbox use,
// and the RFC 5322 message itself (nodemailer's stream transport, no network).
import nodemailer, { type SendMailOptions } from 'nodemailer';
import type { OutgoingMail } from './delivery-ports.js';

/** The same headers whichever way the mail leaves: the stable Message-ID among them. */
export function sendMailOptions(mail: OutgoingMail): SendMailOptions {
  return {
    from: mail.from,
    // An address object, not a string: nodemailer would split `a@x, b@y` into two recipients.
    to: { name: '', address: mail.to },
    subject: mail.subject,
    text: mail.text,
    html: mail.html,
    messageId: mail.messageId,
  };
}

const renderer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows', disableFileAccess: true, disableUrlAccess: true });

/** The message as it would travel (CRLF line ends), for the outbox's `.eml` files and for tests. */
export async function renderRawMail(mail: OutgoingMail): Promise<Buffer> {
  const info = await renderer.sendMail(sendMailOptions(mail));
  const message: unknown = info.message;
  if (!Buffer.isBuffer(message)) throw new Error('nodemailer returned no message buffer');
  return message;
}
