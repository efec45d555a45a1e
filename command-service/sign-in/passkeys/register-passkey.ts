// Adding a passkey to the signed-in user's account: the registration options (a discoverable
// credential with user verification, none of the user's existing passkeys again), then the
// verification of the authenticator's attestation and PasskeyRegistered through the decider. The
// console's join page uses the same steps for an invitee whose account is made with the passkey.
// Attestation is "none": the service does not restrict which authenticator makers users may use,
// so there is nothing to gain from collecting attestation certificates (which also identify the
// device model).
import {
  generateRegistrationOptions,
  verifyRegistrationResponse,
  type PublicKeyCredentialCreationOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { COSEALG } from '@simplewebauthn/server/helpers';
import { ConflictError, ValidationError } from '../../../shared/errors.js';
import type { CommandContext } from '../../../shared/event-store/command-handler.js';
import { READ_MODELS, type SignInCredentialRow, type UserRow } from '../../../shared/db/read-models.js';
import { oauthStreams } from '../../../shared/oauth/oauth-events.js';
import { passkeyDecider } from '../../../shared/sign-in/passkeys/passkey-decider.js';
import { userHandleOf, type RelyingParty } from '../../../shared/sign-in/passkeys/relying-party.js';
import { knownTransports } from '../../../shared/sign-in/passkeys/webauthn-responses.js';
import { passkeyCredentialKey } from '../../../projections/sign-in-credentials-projection.js';
import type { CommandDeps } from '../../command-deps.js';
import { CEREMONY_TTL_SECONDS, type PendingCeremony } from './passkey-challenges.js';

/** EdDSA, ES256 and RS256 cover every platform and roaming authenticator in use. */
export const PASSKEY_ALGORITHMS = [COSEALG.EdDSA, COSEALG.ES256, COSEALG.RS256];

export const PASSKEY_REGISTRATION_FAILED = 'passkey registration failed';

export async function passkeyRegistrationOptions(
  deps: CommandDeps,
  input: { readonly userId: number; readonly relyingParty: RelyingParty },
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const { userId, relyingParty } = input;
  const [user, { state }] = await Promise.all([
    deps.db<UserRow>(READ_MODELS.users).where({ user_id: userId }).first(),
    deps.handler.load(oauthStreams.userCredentials(userId), passkeyDecider),
  ]);
  if (!user) throw new ValidationError(PASSKEY_REGISTRATION_FAILED);
  return creationOptions({
    userId,
    userName: user.email,
    displayName: `${user.first_name} ${user.last_name}`.trim(),
    exclude: [...state.passkeys.values()].map((p) => ({ id: p.credentialId, transports: [...p.transports] })),
    relyingParty,
  });
}

/**
 * Creation options for a user who does not exist yet (an invitee joining with a passkey): the id
 * is drawn beforehand, so the authenticator keeps the same user handle the account will have.
 */
export function newUserPasskeyOptions(input: { readonly userId: number; readonly email: string; readonly displayName: string; readonly relyingParty: RelyingParty }): Promise<PublicKeyCredentialCreationOptionsJSON> {
  return creationOptions({ userId: input.userId, userName: input.email, displayName: input.displayName, exclude: [], relyingParty: input.relyingParty });
}

function creationOptions(input: {
  readonly userId: number;
  readonly userName: string;
  readonly displayName: string;
  readonly exclude: NonNullable<Parameters<typeof generateRegistrationOptions>[0]['excludeCredentials']>;
  readonly relyingParty: RelyingParty;
}): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const { relyingParty } = input;
  return generateRegistrationOptions({
    rpName: relyingParty.name,
    rpID: relyingParty.id,
    userID: userHandleOf(input.userId),
    userName: input.userName,
    userDisplayName: input.displayName,
    timeout: CEREMONY_TTL_SECONDS * 1000,
    attestationType: 'none',
    excludeCredentials: input.exclude,
    authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
    supportedAlgorithmIDs: PASSKEY_ALGORITHMS,
  });
}

/** An attestation that checked out, for a credential no one has registered yet. */
export interface VerifiedPasskey {
  readonly credentialId: string;
  readonly publicKey: string;
  readonly counter: number;
  readonly transports: string[];
}

export interface PasskeyRegistrationInput {
  readonly userId: number;
  readonly response: RegistrationResponseJSON;
  /** The browser's pending registration ceremony, already taken (null: none, expired or spent). */
  readonly ceremony: PendingCeremony | null;
  readonly relyingParty: RelyingParty;
}

/** Checks the authenticator's attestation against the browser's ceremony; writes nothing. */
export async function verifyPasskeyRegistration(
  deps: CommandDeps,
  input: PasskeyRegistrationInput,
): Promise<VerifiedPasskey> {
  const { userId, response, ceremony, relyingParty } = input;
  // A challenge is bound to the user it was issued for: a session switched mid-ceremony fails.
  if (!ceremony || ceremony.userId !== userId) throw new ValidationError(PASSKEY_REGISTRATION_FAILED);

  let verification;
  try {
    verification = await verifyRegistrationResponse({
      response,
      expectedChallenge: ceremony.challenge,
      expectedOrigin: relyingParty.origin,
      expectedRPID: relyingParty.id,
      expectedType: 'webauthn.create',
      requireUserPresence: true,
      requireUserVerification: true,
      supportedAlgorithmIDs: PASSKEY_ALGORITHMS,
    });
  } catch {
    throw new ValidationError(PASSKEY_REGISTRATION_FAILED);
  }
  if (!verification.verified) throw new ValidationError(PASSKEY_REGISTRATION_FAILED);
  const { credential } = verification.registrationInfo;

  // Credential ids are random per authenticator, so one registered to someone else is a replayed
  // or forged registration; sign-in keeps mapping the id to its first owner either way.
  const taken = await deps.db<SignInCredentialRow>(READ_MODELS.signInCredentials)
    .where({ credential_key: passkeyCredentialKey(credential.id) })
    .first();
  if (taken) throw new ConflictError('this passkey is already registered');
  return {
    credentialId: credential.id,
    publicKey: Buffer.from(credential.publicKey).toString('base64url'),
    counter: credential.counter,
    transports: knownTransports(response.response.transports),
  };
}

/** Records a verified passkey on the user (PasskeyRegistered) and waits until sign-in can find it. */
export async function recordPasskey(deps: CommandDeps, userId: number, passkey: VerifiedPasskey, ctx: CommandContext): Promise<{ readonly credentialId: string }> {
  const result = await deps.handler.handle(oauthStreams.userCredentials(userId), passkeyDecider, { type: 'RegisterPasskey', data: { userId, ...passkey } }, ctx);
  // The next sign-in with this passkey finds its user in sign_in_credentials.
  await deps.watermark.waitFor(result.position, deps.projectionWaitMs, [READ_MODELS.signInCredentials]);
  return { credentialId: passkey.credentialId };
}

export async function registerPasskey(
  deps: CommandDeps,
  input: PasskeyRegistrationInput,
  ctx: CommandContext,
): Promise<{ readonly credentialId: string }> {
  return recordPasskey(deps, input.userId, await verifyPasskeyRegistration(deps, input), ctx);
}
