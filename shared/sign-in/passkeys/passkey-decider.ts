// The passkey rules of a user's credentials stream (`user-credentials-{userId}`): a credential id
// is registered once while present (PasskeyRemoved frees it), and every sign-in records the
// authenticator's signature counter, which must go up whenever the authenticator keeps one
// (WebAuthn §6.1.1: a counter that does not increase means the private key may have been cloned).
// The stream also holds TOTP, recovery-code and federated events; this decider folds only the
// passkey events and ignores the rest, so it can read the stream beside the other deciders that
// share it.
//
// The counter check lives here, not only in the WebAuthn library's check at verification time,
// because only the append with an expected revision sees the stored counter: two sign-ins with
// the same assertion that race each other are decided one after the other on the stream.
import type { Decider } from '../../domain/decider.js';
import { ConflictError, ValidationError } from '../../errors.js';
import type { PasskeyRegistered, PasskeyRemoved, PasskeyUsed, UserCredentialEvent } from '../../oauth/oauth-events.js';

/** A credential as the stream records it: its id and COSE public key (base64url) and last counter. */
export interface StoredPasskey {
  readonly credentialId: string;
  readonly publicKey: string;
  readonly counter: number;
  readonly transports: readonly string[];
}

export interface PasskeyState {
  /** By credential id, in registration order. */
  readonly passkeys: ReadonlyMap<string, StoredPasskey>;
}

export type PasskeyCommand =
  | { type: 'RegisterPasskey'; data: PasskeyRegistered['data'] }
  | { type: 'UsePasskey'; data: PasskeyUsed['data'] }
  /** `otherWayToSignIn`: a password, or an account at the upstream provider trusted now (outside this stream). */
  | { type: 'RemovePasskey'; data: PasskeyRemoved['data'] & { otherWayToSignIn: boolean } };

export const LAST_WAY_TO_SIGN_IN = 'This passkey is your only way to sign in: add another one first.';

/** The only message of a refused sign-in: it must not tell which check failed. */
export const PASSKEY_SIGN_IN_FAILED = 'passkey sign-in failed';

const BASE64URL = /^[A-Za-z0-9_-]{1,1024}$/;

/** Whether a value can be a WebAuthn credential id as this service stores them (base64url). */
export function isCredentialId(value: string): boolean {
  return BASE64URL.test(value);
}
const MAX_COUNTER = 0xffff_ffff;

function isCounter(value: number): boolean {
  return Number.isInteger(value) && value >= 0 && value <= MAX_COUNTER;
}

/** A sign-in's counter is acceptable when it went up, or when the authenticator keeps none (both zero). */
export function counterAdvanced(stored: number, presented: number): boolean {
  if (stored === 0 && presented === 0) return true;
  return presented > stored;
}

export const passkeyDecider: Decider<PasskeyCommand, UserCredentialEvent, PasskeyState> = {
  initialState: () => ({ passkeys: new Map() }),

  evolve(state, event) {
    switch (event.type) {
      case 'PasskeyRegistered': {
        const { credentialId, publicKey, counter, transports } = event.data;
        if (state.passkeys.has(credentialId)) return state;
        const passkeys = new Map(state.passkeys);
        passkeys.set(credentialId, { credentialId, publicKey, counter, transports });
        return { passkeys };
      }
      case 'PasskeyUsed': {
        const known = state.passkeys.get(event.data.credentialId);
        if (!known) return state;
        const passkeys = new Map(state.passkeys);
        passkeys.set(known.credentialId, { ...known, counter: event.data.counter });
        return { passkeys };
      }
      case 'PasskeyRemoved': {
        if (!state.passkeys.has(event.data.credentialId)) return state;
        const passkeys = new Map(state.passkeys);
        passkeys.delete(event.data.credentialId);
        return { passkeys };
      }
      default:
        return state;
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'RegisterPasskey': {
        const data = command.data;
        if (!isCredentialId(data.credentialId) || !isCounter(data.counter)) {
          throw new ValidationError('the passkey is malformed');
        }
        if (state.passkeys.has(data.credentialId)) throw new ConflictError('this passkey is already registered');
        const event: PasskeyRegistered = {
          type: 'PasskeyRegistered',
          data: {
            userId: data.userId,
            credentialId: data.credentialId,
            publicKey: data.publicKey,
            counter: data.counter,
            transports: [...new Set(data.transports)],
          },
        };
        return [event];
      }
      case 'UsePasskey': {
        const { userId, credentialId, counter } = command.data;
        const known = state.passkeys.get(credentialId);
        // One message for an unknown credential and a counter that went back (clone detection).
        if (!known || !isCounter(counter) || !counterAdvanced(known.counter, counter)) {
          throw new ValidationError(PASSKEY_SIGN_IN_FAILED);
        }
        const event: PasskeyUsed = { type: 'PasskeyUsed', data: { userId, credentialId, counter } };
        return [event];
      }
      case 'RemovePasskey': {
        // Removed already (another tab, a retry) or never the user's: nothing to record.
        if (!state.passkeys.has(command.data.credentialId)) return [];
        // Decided on the stream, so two tabs removing a user's last two passkeys cannot both succeed.
        if (state.passkeys.size === 1 && !command.data.otherWayToSignIn) throw new ConflictError(LAST_WAY_TO_SIGN_IN);
        const event: PasskeyRemoved = { type: 'PasskeyRemoved', data: { userId: command.data.userId, credentialId: command.data.credentialId } };
        return [event];
      }
    }
  },
};
