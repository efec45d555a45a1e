// Strict ISO 8601 dates and times. Date.parse is too lenient for validation: it accepts
// 2026-02-30 (rolling into March) and reads a zone-less date-time in the server's local zone.

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

/** True for a real date of the Gregorian calendar: 2024-02-29 yes, 2026-02-30 no. */
export function isCalendarDate(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  const days = [31, isLeapYear(year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
  return day <= days;
}

/** Milliseconds since the epoch of a UTC wall-clock time; handles years below 100 (unlike Date.UTC). */
export function utcMillis(year: number, month: number, day: number, hour = 0, minute = 0, second = 0, ms = 0): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, ms);
  return d.getTime();
}

const INSTANT = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2})?)?$/;

export interface ParsedInstant {
  /** Milliseconds since the epoch. */
  readonly time: number;
  readonly dateOnly: boolean;
  readonly hasZone: boolean;
}

/** The last instant with a four-digit year in UTC: a later one has no `YYYY-...Z` form to store. */
export const LATEST_INSTANT_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM[:SS[.fff]][Z|±HH:MM]`, real calendar dates and clock times
 * only. A time with no zone, and a date alone (its 00:00), are read as UTC. Null when malformed,
 * or past LATEST_INSTANT_MS (9999-12-31T23:00-02:00 is in the year 10000 in UTC).
 */
export function parseIsoInstant(text: string): ParsedInstant | null {
  const m = INSTANT.exec(text);
  if (!m) return null;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (!isCalendarDate(year, month, day)) return null;
  const [hour, minute, second] = [Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0)];
  if (hour > 23 || minute > 59 || second > 59) return null;
  const ms = m[7] ? Math.floor(Number(`0.${m[7]}`) * 1000) : 0;
  let offsetMinutes = 0;
  const zone = m[8];
  if (zone && zone !== 'Z') {
    const [oh, om] = [Number(zone.slice(1, 3)), Number(zone.slice(4, 6))];
    if (oh > 23 || om > 59) return null;
    offsetMinutes = (zone.startsWith('-') ? -1 : 1) * (oh * 60 + om);
  }
  const time = utcMillis(year, month, day, hour, minute, second, ms) - offsetMinutes * 60_000;
  if (time > LATEST_INSTANT_MS) return null;
  return { time, dateOnly: m[4] === undefined, hasZone: zone !== undefined };
}
