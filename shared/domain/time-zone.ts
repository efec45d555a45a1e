// IANA time zones of facilities: a facility shows arrival and validity in its own local time, and
// a new pass's validity window is its arrival day there. Node's Intl knows the IANA database, so
// a zone is valid exactly when Intl accepts it; the name is stored as Intl spells it.
import { utcMillis } from './iso-time.js';

export const DEFAULT_TIME_ZONE = 'UTC';
export const MAX_TIME_ZONE_LENGTH = 64;

/** The canonical spelling of an IANA zone name, or null when it is none. */
export function canonicalTimeZone(name: string): string | null {
  const trimmed = name.trim();
  if (trimmed === '' || trimmed.length > MAX_TIME_ZONE_LENGTH || !/^[A-Za-z0-9_+\-/]+$/.test(trimmed)) return null;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: trimmed }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

/** Every zone this runtime knows, for a form's list. */
export function knownTimeZones(): string[] {
  const zones = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  return zones.includes(DEFAULT_TIME_ZONE) ? zones : [DEFAULT_TIME_ZONE, ...zones];
}

/**
 * One formatter per zone, made once: building an Intl.DateTimeFormat loads the zone's rules and
 * costs about a millisecond, formatting with one about a hundredth of that (the front desk shows
 * two door times per guest). Bounded by the zones Intl knows; an unknown name throws before it is kept.
 */
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterOf(zone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(zone);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(zone, formatter);
  }
  return formatter;
}

/** The offset of `zone` from UTC at `instant`, in minutes (east positive). */
export function offsetMinutes(zone: string, instant: Date): number {
  const parts = formatterOf(zone).formatToParts(instant);
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const asUtc = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return Math.round((asUtc - Math.floor(instant.getTime() / 1000) * 1000) / 60_000);
}

/**
 * The instant at which the wall-clock `date` (YYYY-MM-DD) `time` (HH:MM) happens in `zone`. A wall
 * time skipped by a clock change resolves to the instant the same offset as before gives; one
 * that happens twice, to the first.
 */
export function zonedInstant(zone: string, date: string, time = '00:00'): Date {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const [hh, mm] = time.split(':').map(Number) as [number, number];
  const wall = utcMillis(y, m, d, hh, mm); // unlike Date.UTC, right for years below 100
  // Two passes: the offset at the guess, then at the corrected instant (enough for every real zone).
  let guess = wall - offsetMinutes(zone, new Date(wall)) * 60_000;
  guess = wall - offsetMinutes(zone, new Date(guess)) * 60_000;
  return new Date(guess);
}

/** `instant` as the wall clock in `zone` shows it: { date: YYYY-MM-DD, time: HH:MM }. */
export function wallClock(zone: string, instant: Date): { date: string; time: string } {
  const local = new Date(instant.getTime() + offsetMinutes(zone, instant) * 60_000);
  const iso = local.toISOString();
  return { date: iso.slice(0, 10), time: iso.slice(11, 16) };
}

/**
 * A pass's arrival as the facility's wall clock in `zone` shows it: the arrival day, and the time
 * when the host gave one. The time is read from the window's start, so a pass issued in UTC before
 * its facility had a zone still shows the true local time.
 */
export function localArrival(zone: string, arrivalDate: string, arrivalTime: string | null, validFrom: Date): { date: string; time: string | null } {
  if (arrivalTime === null || Number.isNaN(validFrom.getTime())) return { date: arrivalDate, time: arrivalTime };
  return wallClock(zone, validFrom);
}
