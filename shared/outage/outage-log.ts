// Outages as the error log sees them: one line when a part becomes unavailable, not one per
// request refused meanwhile. An outage of a part is over once no request has met it for
// QUIET_MS; meeting it again after that is a new outage, logged again. Pure state with the time
// given, so it is tested without waiting.
import type { Outage, Part } from './part-outage.js';

/** Past this long without a request meeting the part unavailable, its outage is over. */
export const OUTAGE_QUIET_MS = 30_000;

interface Ongoing {
  readonly since: number;
  lastSeen: number;
}

export class OutageLog {
  private readonly ongoing = new Map<Part, Ongoing>();

  constructor(private readonly quietMs = OUTAGE_QUIET_MS) {}

  /** Notes that a request met `outage` at `now` (ms); true when it is the first of an outage (to be logged). */
  note(outage: Outage, now: number): boolean {
    const current = this.ongoing.get(outage.part);
    if (current && now - current.lastSeen < this.quietMs) {
      current.lastSeen = now;
      return false;
    }
    this.ongoing.set(outage.part, { since: now, lastSeen: now });
    return true;
  }

  /** The parts met unavailable within the last quiet period, at `now`. */
  unavailable(now: number): Part[] {
    return [...this.ongoing].filter(([, o]) => now - o.lastSeen < this.quietMs).map(([part]) => part);
  }
}
