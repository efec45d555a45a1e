// Sign-in with a discoverable passkey: the browser presents an assertion for the challenge this
// browser was given; the credential id names the user (sign_in_credentials), the user's
// credentials stream holds the public key and counter, the signature and flags are checked
// (user verification required), and PasskeyUsed records the new counter through the decider,
// which refuses a counter that went back. Every refusal is the same ValidationError, so a caller
// cannot tell an unknown credential from a bad signature, a spent challenge or a cloned key.
import { verifyAuthenticationResponse, type AuthenticationResponseJSON } from '@simplewebauthn/server';
import { ValidationError } from '../../../shared/errors.js';
import type { CommandContext } from '../../../shared/event-store/command-handler.js';
import { READ_MODELS, type SignInCredentialRow, type UserRow } from '../../../shared/db/read-models.js';
import { oauthStreams } from '../../../shared/oauth/oauth-events.js';
import { PASSKEY_SIGN_IN_FAILED, passkeyDecider } from '../../../shared/sign-in/passkeys/passkey-decider.js';
import { encodedUserHandleOf, type RelyingParty } from '../../../shared/sign-in/passkeys/relying-party.js';
import { passkeyCredentialKey } from '../../../projections/sign-in-credentials-projection.js';
import type { CommandDeps } from '../../command-deps.js';
import type { PendingCeremony } from './passkey-challenges.js';

export interface PasskeySignInInput {
  readonly response: AuthenticationResponseJSON;
  /** The browser's pending authentication ceremony, already taken (null: none, expired or spent). */
  readonly ceremony: PendingCeremony | null;
  readonly relyingParty: RelyingParty;
}

/** Why a sign-in was refused: for the log only, never for the browser. */
export class PasskeySignInRefused extends ValidationError {
  constructor(readonly reason: string) {
    super(PASSKEY_SIGN_IN_FAILED);
  }
}

export async function signInWithPasskey(
  deps: CommandDeps,
  input: PasskeySignInInput,
  ctx: Omit<CommandContext, 'actor'>,
): Promise<{ readonly userId: number; readonly orgId: number }> {
  const { response, ceremony, relyingParty } = input;
  if (!ceremony) throw new PasskeySignInRefused('no live challenge');

  const credentialId = response.id;
  const row = await deps.db<SignInCredentialRow>(READ_MODELS.signInCredentials)
    .where({ credential_key: passkeyCredentialKey(credentialId) })
    .first();
  if (!row || row.kind !== 'passkey') throw new PasskeySignInRefused('unknown credential');
  const userId = Number(row.user_id);

  const { state } = await deps.handler.load(oauthStreams.userCredentials(userId), passkeyDecider);
  const passkey = state.passkeys.get(credentialId);
  if (!passkey) throw new PasskeySignInRefused('credential not on the user stream');
  // A discoverable credential returns the user handle given at registration: it must name the
  // same user the credential id maps to.
  const userHandle = response.response.userHandle;
  if (userHandle && userHandle !== encodedUserHandleOf(userId)) throw new PasskeySignInRefused('user handle mismatch');

  let verification;
  try {
    verification = await verifyAuthenticationResponse({
      response,
      expectedChallenge: ceremony.challenge,
      expectedOrigin: relyingParty.origin,
      expectedRPID: relyingParty.id,
      expectedType: 'webauthn.get',
      requireUserVerification: true,
      credential: {
        id: passkey.credentialId,
        publicKey: new Uint8Array(Buffer.from(passkey.publicKey, 'base64url')),
        counter: passkey.counter,
        transports: [...passkey.transports] as never,
      },
    });
  } catch (error) {
    // The library throws for every failed check (origin, challenge, signature, flags, counter);
    // its message quotes the values compared, which stay out of the log.
    throw new PasskeySignInRefused(error instanceof Error ? error.message.split('"')[0]!.trim() : 'verification failed');
  }
  if (!verification.verified) throw new PasskeySignInRefused('signature not verified');

  const user = await deps.db<UserRow>(READ_MODELS.users).where({ user_id: userId }).first();
  if (!user) throw new PasskeySignInRefused('user not found');

  try {
    await deps.handler.handle(
      oauthStreams.userCredentials(userId),
      passkeyDecider,
      { type: 'UsePasskey', data: { userId, credentialId, counter: verification.authenticationInfo.newCounter } },
      { ...ctx, actor: { kind: 'user', id: userId } },
    );
  } catch (error) {
    if (error instanceof ValidationError) throw new PasskeySignInRefused('counter did not advance');
    throw error;
  }
  return { userId, orgId: Number(user.org_id) };
}
