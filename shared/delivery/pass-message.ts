// What a guest receives for a batch of passes: one email (plain text and HTML) and one SMS, each
// with the one link to the batch's pass page. Pure: no I/O, no clock, no configuration read here.
//
// Every guest- or host-supplied value (first name, facility name, invited_by) is made one line
// (control characters gone) before it reaches a header or a line of text, and escaped by the
// `html` template in the HTML part. Times are the facility's local time, named by its zone
// ("09:30 Europe/Berlin").
import { html, type SafeHtml } from '../sign-in/html.js';
import { localArrival, wallClock } from '../domain/time-zone.js';
import type { OutgoingMail, OutgoingSms } from './delivery-ports.js';

export interface PassMessageContent {
  batchId: string;
  guestFirstName: string;
  facilityName: string;
  /** YYYY-MM-DD */
  arrivalDate: string;
  /** HH:MM (the facility's local time when issued), or null when the host gave none */
  arrivalTime: string | null;
  /** The facility's IANA time zone: the times shown are its wall clock. */
  timeZone: string;
  /** ISO 8601, UTC */
  validFrom: string;
  /** ISO 8601, UTC */
  validUntil: string;
  invitedBy: string | null;
  /** The batch's pass page, `{base}/p/{token}`. */
  passLink: string;
  /** The delivery round (0 first, n after the n-th resend): names the Message-ID / idempotency key. */
  round?: number;
  passCount: number;
}

/**
 * A value for a header or a single line of text: control characters (CR and LF among them, so no
 * header can be added), Unicode line separators and runs of white space become one space.
 */
export function oneLine(value: string): string {
  return value
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The host of the base URL, as the right-hand side of an address or a Message-ID. */
function domainOf(publicBaseUrl: string): string {
  const { hostname } = new URL(publicBaseUrl);
  // An IPv6 literal is `[::1]` in a URL and `[IPv6:::1]` in an address (RFC 5321 4.1.3).
  return hostname.startsWith('[') ? `[IPv6:${hostname.slice(1)}` : hostname;
}

/** `<pass-{batchId}@{host}>`: the same for every attempt, so a receiver can drop a repeat. */
export function passMessageId(batchId: string, publicBaseUrl: string, round = 0): string {
  // A batch id is a UUID; anything else reaching a header is a bug, not something to clean up.
  if (!/^[A-Za-z0-9-]{1,64}$/.test(batchId)) throw new TypeError('batchId must be a UUID');
  // A resend the guest asked for is a new message: a receiver that drops repeats must not drop it.
  return round === 0 ? `<pass-${batchId}@${domainOf(publicBaseUrl)}>` : `<pass-${batchId}-r${round}@${domainOf(publicBaseUrl)}>`;
}

/** MAIL_FROM's default: `Guest Pass <no-reply@{host of PUBLIC_BASE_URL}>`. */
export function defaultMailFrom(publicBaseUrl: string): string {
  return `Guest Pass <no-reply@${domainOf(publicBaseUrl)}>`;
}

export function passSmsIdempotencyKey(batchId: string, round = 0): string {
  return round === 0 ? `pass-${batchId}-sms` : `pass-${batchId}-r${round}-sms`;
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

function dayOf(date: Date): string {
  return `${WEEKDAYS[date.getUTCDay()]} ${date.getUTCDate()} ${MONTHS[date.getUTCMonth()]} ${date.getUTCFullYear()}`;
}

/** `Tuesday 1 December 2026`, or the value as given when it is not a date. */
function formatDay(yyyyMmDd: string): string {
  const date = /^\d{4}-\d{2}-\d{2}$/.test(yyyyMmDd) ? new Date(`${yyyyMmDd}T00:00:00Z`) : null;
  return date && !Number.isNaN(date.getTime()) ? dayOf(date) : oneLine(yyyyMmDd);
}

/** `Tuesday 1 December 2026, 09:30 Europe/Berlin`, or the value as given when it is not an instant. */
function formatInstant(iso: string, zone: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return oneLine(iso);
  const local = wallClock(zone, date);
  return `${formatDay(local.date)}, ${local.time} ${oneLine(zone)}`;
}

function localArrivalOf(content: PassMessageContent): { date: string; time: string | null } {
  return localArrival(content.timeZone, content.arrivalDate, content.arrivalTime, new Date(content.validFrom));
}

function arrival(content: PassMessageContent): string {
  const local = localArrivalOf(content);
  const day = formatDay(local.date);
  return local.time ? `${day} at ${oneLine(local.time)} ${oneLine(content.timeZone)}` : day;
}

function validity(content: PassMessageContent): string {
  return `from ${formatInstant(content.validFrom, content.timeZone)} until ${formatInstant(content.validUntil, content.timeZone)}`;
}

/** "1 pass", "3 passes". */
export function passCountText(count: number): string {
  return `${count} ${count === 1 ? 'pass' : 'passes'}`;
}

function checkedLink(passLink: string): string {
  const url = new URL(passLink);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new TypeError('passLink must be an http(s) URL');
  return url.href;
}

export function composePassEmail(content: PassMessageContent, to: string, options: { from: string; publicBaseUrl: string }): OutgoingMail {
  const link = checkedLink(content.passLink);
  const facility = oneLine(content.facilityName);
  const firstName = oneLine(content.guestFirstName);
  const invitedBy = content.invitedBy === null ? '' : oneLine(content.invitedBy);
  const passes = passCountText(content.passCount);
  const guestPasses = content.passCount === 1 ? 'a guest pass' : `${content.passCount} guest passes`;
  const subject = content.passCount === 1 ? `Your guest pass for ${facility}` : `Your ${content.passCount} guest passes for ${facility}`;
  const facts: Array<[string, string]> = [
    ['Facility', facility],
    ['Arrival', arrival(content)],
    ['Valid', validity(content)],
    ['Passes', passes],
    ...(invitedBy ? ([['Invited by', invitedBy]] as Array<[string, string]>) : []),
  ];

  const text = [
    `Hello ${firstName},`,
    '',
    `You have ${guestPasses} for ${facility}.`,
    '',
    ...facts.map(([label, value]) => `${label}: ${value}`),
    '',
    'Open your pass:',
    link,
    '',
    'Anyone who has this link can open your pass: keep it to yourself.',
    '',
  ].join('\n');

  const row = ([label, value]: [string, string]): SafeHtml =>
    html`<tr><th scope="row" style="text-align:left;vertical-align:top;padding:4px 16px 4px 0;color:#555555;font-weight:normal">${label}</th><td style="padding:4px 0">${value}</td></tr>`;
  const body = html`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${subject}</title>
</head>
<body style="margin:0;padding:24px;background-color:#f4f4f5;font-family:Arial,Helvetica,sans-serif;font-size:16px;line-height:1.5;color:#1f2328">
<div style="max-width:560px;margin:0 auto;padding:24px;background-color:#ffffff;border-radius:8px">
<p style="margin:0 0 16px 0">Hello ${firstName},</p>
<p style="margin:0 0 16px 0">You have ${guestPasses} for <strong>${facility}</strong>.</p>
<table role="presentation" style="border-collapse:collapse;margin:0 0 24px 0">
${facts.map(row)}
</table>
<p style="margin:0 0 24px 0"><a href="${link}" style="display:inline-block;padding:12px 24px;background-color:#1d4ed8;color:#ffffff;text-decoration:none;border-radius:6px;font-weight:bold">Open your pass</a></p>
<p style="margin:0 0 8px 0;font-size:14px;color:#555555">Or open this address:<br><a href="${link}" style="color:#1d4ed8;word-break:break-all">${link}</a></p>
<p style="margin:16px 0 0 0;font-size:14px;color:#555555">Anyone who has this link can open your pass: keep it to yourself.</p>
</div>
</body>
</html>
`;

  return {
    to: oneLine(to),
    from: oneLine(options.from),
    subject,
    text,
    html: body.value,
    messageId: passMessageId(content.batchId, options.publicBaseUrl, content.round ?? 0),
    link: checkedLink(content.passLink),
  };
}

/** One SMS segment holds 160 GSM-7 characters. */
const SMS_SEGMENT = 160;
/** A facility name is cut no shorter than this to keep the SMS to one segment. */
const MIN_FACILITY = 16;

export function composePassSms(content: PassMessageContent, to: string, options: { publicBaseUrl: string }): OutgoingSms {
  void options; // the link is absolute already; kept for symmetry with composePassEmail
  const link = checkedLink(content.passLink);
  const what = content.passCount === 1 ? 'Guest pass' : `${content.passCount} guest passes`;
  const local = localArrivalOf(content);
  const when = local.time ? `${oneLine(local.date)} ${oneLine(local.time)} ${oneLine(content.timeZone)}` : oneLine(local.date);
  const render = (facility: string) => `${what} for ${facility} on ${when}: ${link}`;
  let facility = oneLine(content.facilityName);
  const over = render(facility).length - SMS_SEGMENT;
  if (over > 0 && facility.length > MIN_FACILITY) {
    // ASCII dots: an ellipsis character is not GSM-7 and would cut the segment to 70 characters.
    facility = facility.slice(0, Math.max(MIN_FACILITY, facility.length - over - 3)).trimEnd() + '...';
  }
  return { to: to.trim(), text: render(facility), idempotencyKey: passSmsIdempotencyKey(content.batchId, content.round ?? 0), link };
}
