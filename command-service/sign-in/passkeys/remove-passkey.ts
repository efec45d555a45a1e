// Removing a passkey from the signed-in user's account (a lost device): PasskeyRemoved on the
// user's credentials stream, after which the passkey signs in no more (sign-in decides on that
// stream, not on the read model). Refused while it is the user's last way to sign in: no
// password, no other passkey, and no account at the upstream provider the service now trusts.
import type { CommandAppDeps } from '../../app.js';
import type { CommandContext } from '../../../shared/event-store/command-handler.js';
import { READ_MODELS } from '../../../shared/db/read-models.js';
import { ConflictError } from '../../../shared/errors.js';
import { oauthStreams } from '../../../shared/oauth/oauth-events.js';
import { credentialsDecider, type CredentialsState } from '../../../shared/sign-in/credentials-decider.js';
import { passkeyDecider } from '../../../shared/sign-in/passkeys/passkey-decider.js';

export const LAST_WAY_TO_SIGN_IN = 'This passkey is your only way to sign in: add another one first.';

/** Whether the user keeps a way to sign in without any one of their passkeys (`upstream`: the trusted provider's issuer, if any). */
export function passkeysRemovable(credentials: CredentialsState, hasPassword: boolean, upstream: string | null): boolean {
  return hasPassword || credentials.passkeys.size > 1 || (upstream !== null && credentials.federatedIssuers.has(upstream));
}

/** Whether the user signs in with a password (set when the user is added, so the read model has it). */
export async function hasPassword(deps: Pick<CommandAppDeps, 'db'>, userId: number): Promise<boolean> {
  const row = await deps.db(READ_MODELS.users).first('password_hash').where({ user_id: userId });
  return typeof row?.password_hash === 'string';
}

export async function removePasskey(deps: CommandAppDeps, input: { userId: number; credentialId: string }, ctx: CommandContext): Promise<void> {
  const { userId, credentialId } = input;
  const stream = oauthStreams.userCredentials(userId);
  const [{ state }, password] = await Promise.all([deps.handler.load(stream, credentialsDecider), hasPassword(deps, userId)]);
  if (state.passkeys.has(credentialId) && !passkeysRemovable(state, password, deps.oauth.federation?.issuer ?? null)) {
    throw new ConflictError(LAST_WAY_TO_SIGN_IN);
  }
  // Only among the user's own passkeys: another user's credential id changes nothing.
  await deps.handler.handle(stream, passkeyDecider, { type: 'RemovePasskey', data: { userId, credentialId } }, ctx);
}
