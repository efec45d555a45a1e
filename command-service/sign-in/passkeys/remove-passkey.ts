// Removing a passkey from the signed-in user's account (a lost device): PasskeyRemoved on the
// user's credentials stream, after which the passkey signs in no more (sign-in decides on that
// stream, not on the read model). The decider refuses the last one of a user with no other way to
// sign in: no password, and no account at the upstream provider the service now trusts.
import type { CommandAppDeps } from '../../command-app-deps.js';
import type { CommandContext } from '../../../shared/event-store/command-handler.js';
import { READ_MODELS } from '../../../shared/db/read-models.js';
import { oauthStreams } from '../../../shared/oauth/oauth-events.js';
import { credentialsDecider, type CredentialsState } from '../../../shared/sign-in/credentials-decider.js';
import { passkeyDecider } from '../../../shared/sign-in/passkeys/passkey-decider.js';

/** A way to sign in besides passkeys (`upstream`: the trusted provider's issuer, if any). */
export function otherWayToSignIn(credentials: CredentialsState, hasPassword: boolean, upstream: string | null): boolean {
  return hasPassword || (upstream !== null && credentials.federatedIssuers.has(upstream));
}

export async function removePasskey(deps: CommandAppDeps, input: { userId: number; credentialId: string }, ctx: CommandContext): Promise<void> {
  const { userId, credentialId } = input;
  const stream = oauthStreams.userCredentials(userId);
  const [{ state }, user] = await Promise.all([
    deps.handler.load(stream, credentialsDecider),
    // Set when the user is added, so the read model has it.
    deps.db(READ_MODELS.users).first('password_hash').where({ user_id: userId }),
  ]);
  const other = otherWayToSignIn(state, typeof user?.password_hash === 'string', deps.oauth.federation?.issuer ?? null);
  // Only among the user's own passkeys: another user's credential id changes nothing.
  await deps.handler.handle(stream, passkeyDecider, { type: 'RemovePasskey', data: { userId, credentialId, otherWayToSignIn: other } }, ctx);
}
