// Pending WebAuthn ceremonies, kept server-side in this process, keyed by a random handle that
// the browser holds in an HttpOnly cookie.
//
// Why server-side rather than the challenge itself in a signed cookie: a signed cookie can prove
// that we issued a challenge, but not that it has not been used already; the browser (or anyone
// who copied the cookie and an assertion) could present the same pair again, and a passkey that
// keeps no signature counter (most synced passkeys report 0) would then sign in twice. Here
// take() removes the entry, so a challenge is answered once, and the handle binds it to the
// browser that asked for it. The cost is that a ceremony must end on the process it began on:
// the service runs one command-service process; spreading it over several needs sticky routing
// for /signin/passkey and /account/passkeys, or this store moved to a shared one.
import { randomBytes } from 'node:crypto';

export type CeremonyPurpose = 'registration' | 'authentication';

export interface PendingCeremony {
  readonly purpose: CeremonyPurpose;
  /** The challenge as sent to the browser (base64url). */
  readonly challenge: string;
  /** For registration: the signed-in user the passkey is being added to. */
  readonly userId: number | null;
  readonly expiresAt: number;
}

/** Long enough for a person to find their authenticator, short enough to be useless later. */
export const CEREMONY_TTL_SECONDS = 300;
/** A bound on memory: one entry per browser mid-ceremony; the oldest are dropped beyond it. */
const MAX_PENDING = 10_000;

export class PasskeyChallenges {
  private readonly pending = new Map<string, PendingCeremony>();

  constructor(private readonly maxPending = MAX_PENDING) {}

  /** Remembers a ceremony, replacing the browser's previous one; returns the handle for its cookie. */
  begin(ceremony: Omit<PendingCeremony, 'expiresAt'>, now: Date, previousHandle?: string): string {
    if (previousHandle) this.pending.delete(previousHandle);
    this.sweep(now.getTime());
    const handle = randomBytes(32).toString('base64url');
    this.pending.set(handle, { ...ceremony, expiresAt: now.getTime() + CEREMONY_TTL_SECONDS * 1000 });
    while (this.pending.size > this.maxPending) {
      const oldest = this.pending.keys().next().value;
      if (oldest === undefined) break;
      this.pending.delete(oldest);
    }
    return handle;
  }

  /** Removes and returns the ceremony of this handle if it is live and of this purpose; else null. */
  take(handle: string | undefined, purpose: CeremonyPurpose, now: Date): PendingCeremony | null {
    if (!handle) return null;
    const ceremony = this.pending.get(handle);
    if (!ceremony) return null;
    this.pending.delete(handle);
    if (ceremony.purpose !== purpose || ceremony.expiresAt <= now.getTime()) return null;
    return ceremony;
  }

  private sweep(now: number): void {
    // Entries are in insertion order, hence in expiry order: stop at the first live one.
    for (const [handle, ceremony] of this.pending) {
      if (ceremony.expiresAt > now) break;
      this.pending.delete(handle);
    }
  }
}
