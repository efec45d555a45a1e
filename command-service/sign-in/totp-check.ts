// Accepting a TOTP code for a user: valid now, and for a later time step than any code accepted
// before (totp-replay-guard.ts), at enrolment as at sign-in.
import { open } from '../../shared/crypto/sealed-box.js';
import type { SubjectKeyStore } from '../../shared/crypto/subject-keys.js';
import type { SealedValue } from '../../shared/oauth/oauth-events.js';
import { isTotpSecret, verifyTotp } from '../../shared/sign-in/totp.js';
import type { TotpReplayGuard } from '../../shared/sign-in/totp-replay-guard.js';

export async function acceptTotpCode(guard: TotpReplayGuard, userId: number, secret: string, code: string, now: Date): Promise<boolean> {
  const step = await verifyTotp(secret, code, { now, afterStep: guard.lastStep(userId, now) });
  return step !== null && guard.accept(userId, step, now);
}

/** The enrolled secret, or null when its subject key is gone (the user's keys were destroyed). */
export async function openTotpSecret(subjectKeys: SubjectKeyStore, sealed: SealedValue): Promise<string | null> {
  const key = (await subjectKeys.getMany([sealed.keyId])).get(sealed.keyId);
  if (key === undefined) return null;
  try {
    const secret = open<unknown>(key, sealed);
    return isTotpSecret(secret) ? secret : null;
  } catch {
    return null;
  }
}
