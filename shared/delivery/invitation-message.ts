// What an invitee receives: one email (plain text and HTML) with the link to accept the
// invitation. Pure. The organization's name is made one line before it reaches a header or a
// line, and escaped by the `html` template in the HTML part.
import { html } from '../sign-in/html.js';
import type { OutgoingMail } from './delivery-ports.js';
import { oneLine } from './pass-message.js';

const ROLE_WORDS: Readonly<Record<string, string>> = {
  admin: 'an administrator',
  self_invite: 'a host who can invite guests',
  employee_view: 'someone who can read the member directory',
};

export function invitationMail(input: {
  readonly inviteId: number;
  readonly to: string;
  readonly from: string;
  readonly organization: string;
  readonly role: string | null;
  /** `{base}/invitations/join/{ref}` */
  readonly link: string;
  /** The host of the public base URL, for the Message-ID. */
  readonly domain: string;
  /** Which link of this invitation: each send has its own, so its Message-ID is its own too. */
  readonly attempt: number;
}): OutgoingMail {
  const organization = oneLine(input.organization);
  const as = input.role !== null && ROLE_WORDS[input.role] !== undefined ? ` as ${ROLE_WORDS[input.role]}` : '';
  const text = [
    `You are invited to join ${organization} on Guest Pass${as}.`,
    '',
    `Accept or decline: ${input.link}`,
    '',
    'If you have no account yet, the link lets you set a password or a passkey first. If you did not expect this email, ignore it.',
  ].join('\n');
  const body = html`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Invitation to ${organization}</title></head>
<body style="font-family: sans-serif; color: #1b1b1b;">
<p>You are invited to join <strong>${organization}</strong> on Guest Pass${as}.</p>
<p><a href="${input.link}" style="color: #1d4f91;">Accept or decline the invitation</a></p>
<p>If you have no account yet, the link lets you set a password or a passkey first. If you did not expect this email, ignore it.</p>
</body></html>`;
  return {
    to: input.to,
    from: input.from,
    subject: `Invitation to join ${organization}`,
    text,
    html: body.value,
    link: input.link,
    messageId: `<invitation-${input.inviteId}-${input.attempt}@${input.domain}>`,
  };
}
