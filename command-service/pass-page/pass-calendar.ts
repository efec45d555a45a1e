// "Add to calendar": the visit as an iCalendar file (RFC 5545), pure. One VEVENT spanning the
// passes' validity window, as UTC instants (every calendar shows them in its own zone); the
// description's text names the facility's local times and zone. Lines end in CRLF and are folded at 75 octets (never inside a
// UTF-8 sequence); TEXT values are escaped (backslash, semicolon, comma, line breaks) and rid of
// control characters. The file carries no QR value and no link to the page: calendars sync to
// places a bearer credential should not go.
import { createHash } from 'node:crypto';
import type { PassPageModel } from './pass-page-model.js';
import { localArrival, wallClock } from '../../shared/domain/time-zone.js';

/** The visit as the page shows it, with the batch (the event's UID) and DTSTAMP (when the file was made). */
export type PassCalendarInput = Pick<
  PassPageModel,
  'firstName' | 'facilityName' | 'timeZone' | 'arrivalDate' | 'arrivalTime' | 'validFrom' | 'validUntil' | 'invitedBy'
> & { readonly batchId: string; readonly now: Date };

export const PASS_CALENDAR_FILENAME = 'guest-pass.ics';

/** An instant in the UTC form of DATE-TIME (RFC 5545 §3.3.5, form #2): `20261201T093000Z`. */
export function icsUtc(instant: Date): string {
  return instant.toISOString().replace(/\.\d{3}Z$/, 'Z').replace(/[-:]/g, '');
}

/**
 * A TEXT value (§3.3.11): backslash, semicolon and comma escaped, line breaks as `\n`, other
 * controls dropped. Unicode's line breaks (NEL U+0085, LS U+2028, PS U+2029) are line breaks too:
 * a calendar that honours them would otherwise start a new content line inside the value.
 */
export function icsText(value: string): string {
  return value
    .replace(/\r\n?|[\u0085\u2028\u2029]/g, '\n')
    .replace(/[\\;,]/g, (c) => `\\${c}`)
    .replace(/\n/g, '\\n')
    .replace(/[\u0000-\u0008\u000a-\u001f\u007f-\u009f]/g, '');
}

/** Folds a content line (§3.1): at most 75 octets a line, continuations start with one space. */
export function foldLine(line: string): string {
  const parts: string[] = [];
  let current = '';
  let octets = 0;
  for (const char of line) {
    const size = Buffer.byteLength(char, 'utf8');
    // The first line holds 75 octets; a continuation holds 74 after its leading space.
    if (octets + size > (parts.length === 0 ? 75 : 74)) {
      parts.push(current);
      current = '';
      octets = 0;
    }
    current += char;
    octets += size;
  }
  parts.push(current);
  return parts.join('\r\n ');
}

/** A stable UID for the batch's event that does not reveal the batch id itself. */
export function passCalendarUid(batchId: string): string {
  return `${createHash('sha256').update(`guestpass pass page event ${batchId}`, 'utf8').digest('hex').slice(0, 32)}@guestpass`;
}

export function passCalendar(input: PassCalendarInput): string {
  const local = localArrival(input.timeZone, input.arrivalDate, input.arrivalTime, input.validFrom);
  const arrival = local.time === null ? local.date : `${local.date} ${local.time} ${input.timeZone}`;
  const wall = (instant: Date) => {
    const { date, time } = wallClock(input.timeZone, instant);
    return `${date} ${time}`;
  };
  const description = [
    `Guest pass for ${input.firstName} at ${input.facilityName}.`,
    `Arrival: ${arrival}.`,
    `Valid from ${wall(input.validFrom)} until ${wall(input.validUntil)} ${input.timeZone}.`,
    input.invitedBy !== null ? `Invited by ${input.invitedBy}.` : null,
    'Open your pass page to show the QR code at the entrance.',
  ]
    .filter((line): line is string => line !== null)
    .join('\n');
  const lines = [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//Guest Pass//Pass page//EN',
    'CALSCALE:GREGORIAN',
    'METHOD:PUBLISH',
    'BEGIN:VEVENT',
    `UID:${passCalendarUid(input.batchId)}`,
    `DTSTAMP:${icsUtc(input.now)}`,
    `DTSTART:${icsUtc(input.validFrom)}`,
    `DTEND:${icsUtc(input.validUntil)}`,
    `SUMMARY:${icsText(`Guest visit: ${input.facilityName}`)}`,
    `LOCATION:${icsText(input.facilityName)}`,
    `DESCRIPTION:${icsText(description)}`,
    'TRANSP:TRANSPARENT',
    'END:VEVENT',
    'END:VCALENDAR',
  ];
  return lines.map(foldLine).join('\r\n') + '\r\n';
}
