// A TOTP code must not work twice (RFC 6238 §5.2: "the verifier MUST NOT accept the second
// attempt of the OTP after the successful validation has been issued for the first OTP"). The
// guard remembers, per user, the last time step accepted, and accepts only a later one.
//
// Kept in this process's memory, not in an event: an accepted code is only interesting for the
// next ~90 seconds (after that no code of that step verifies anyway), so entries are dropped after
// two minutes. The limit: with several command-service replicas, a code could be replayed on
// another replica within that window; the durable form would be a `TotpCodeAccepted {userId,
// timeStep}` event on the user's credentials stream (see the hand-over note of this change).
import { TOTP_PERIOD_SECONDS } from './totp.js';

const MEMORY_MS = 4 * TOTP_PERIOD_SECONDS * 1000;

export class TotpReplayGuard {
  /** Insertion order = order of acceptance, so the oldest entries are at the front. */
  private readonly last = new Map<number, { readonly step: number; readonly at: number }>();

  /** The last step accepted for the user (pass it to verifyTotp as `afterStep`). */
  lastStep(userId: number, now: Date): number | undefined {
    this.prune(now.getTime());
    return this.last.get(userId)?.step;
  }

  /**
   * Records `step` as used; false when it (or a later one) was already accepted. Synchronous, so
   * two requests verified concurrently in this process cannot both be accepted.
   */
  accept(userId: number, step: number, now: Date): boolean {
    this.prune(now.getTime());
    const previous = this.last.get(userId);
    if (previous !== undefined && step <= previous.step) return false;
    this.last.delete(userId);
    this.last.set(userId, { step, at: now.getTime() });
    return true;
  }

  private prune(nowMs: number): void {
    for (const [userId, entry] of this.last) {
      if (nowMs - entry.at < MEMORY_MS) break;
      this.last.delete(userId);
    }
  }
}
