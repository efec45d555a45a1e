// Accepting a TOTP code for a user: valid now, and for a later time step than any code accepted
// before, at enrolment as at sign-in. The last accepted step lives in the user's credentials
// stream (TotpCodeAccepted, see credentials-decider.ts), not in this process, so a code spent on
// one replica is refused on every other and after a restart.
import type { CommandDeps } from '../command-deps.js';
import { open } from '../../shared/crypto/sealed-box.js';
import type { SubjectKeyStore } from '../../shared/crypto/subject-keys.js';
import type { CommandContext } from '../../shared/event-store/command-handler.js';
import { ValidationError } from '../../shared/errors.js';
import { oauthStreams, type SealedValue } from '../../shared/oauth/oauth-events.js';
import { credentialsDecider, type CredentialsState } from '../../shared/sign-in/credentials-decider.js';
import { isTotpSecret, verifyTotp } from '../../shared/sign-in/totp.js';

/** The time step of a code valid now and later than the last one accepted for the user, or null. */
export function verifyTotpCode(state: CredentialsState, secret: string, code: string, now: Date): Promise<number | null> {
  return verifyTotp(secret, code, { now, afterStep: state.lastTotpStep ?? undefined });
}

/**
 * Verifies the code against the credentials state the caller loaded, then spends its step with
 * AcceptTotpCode. That state may be stale (a code accepted meanwhile, here or on another
 * replica): the append, with the expected revision, is decided again on the stored stream, so of
 * two submissions of one code exactly one is accepted.
 */
export async function acceptTotpCode(
  deps: Pick<CommandDeps, 'handler'>,
  input: { readonly userId: number; readonly state: CredentialsState; readonly secret: string; readonly code: string },
  context: CommandContext,
): Promise<boolean> {
  const { userId, state, secret, code } = input;
  const timeStep = await verifyTotpCode(state, secret, code, context.now);
  if (timeStep === null) return false;
  try {
    await deps.handler.handle(oauthStreams.userCredentials(userId), credentialsDecider, { type: 'AcceptTotpCode', data: { userId, timeStep } }, context);
  } catch (error) {
    if (error instanceof ValidationError) return false;
    throw error;
  }
  return true;
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
