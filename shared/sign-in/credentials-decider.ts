// A user's sign-in credentials, one stream per user (`user-credentials-{userId}`): the TOTP
// second factor and its recovery codes are decided here. The same stream holds passkeys and
// federated links, appended by their own deciders (shared/sign-in/passkeys/, federated/); this
// one folds those events only far enough to describe the account (how many passkeys, which
// providers) and never decides on them.
//
// Rules:
//   * one TOTP enrolment per user: enrolling again while one is active is a conflict (a lost
//     authenticator is replaced through recovery, not by a second enrolment racing the first);
//   * enrolment issues the recovery codes in the same append, so there is never a TOTP factor
//     without a way back in; a new set replaces every code of the earlier one;
//   * a recovery code works once: the append of RecoveryCodeUsed, with the stream's expected
//     revision, is what spends it, so two sign-ins racing with one code cannot both pass.
import type { Decider } from '../domain/decider.js';
import { ConflictError, ValidationError } from '../errors.js';
import type {
  RecoveryCodeUsed,
  RecoveryCodesIssued,
  SealedValue,
  TotpEnrolled,
  UserCredentialEvent,
} from '../oauth/oauth-events.js';
import { SHA256_HEX_PATTERN } from '../oauth/opaque-credentials.js';

export interface CredentialsState {
  /** The TOTP secret, sealed under the user's subject key; null until enrolled. */
  readonly totp: SealedValue | null;
  /** SHA-256 of the recovery codes of the current set that are still unused. */
  readonly recoveryCodes: ReadonlySet<string>;
  /** Credential ids of the registered passkeys. */
  readonly passkeys: ReadonlySet<string>;
  /** Issuers of the linked upstream accounts. */
  readonly federatedIssuers: ReadonlySet<string>;
}

export type CredentialsCommand =
  | { type: 'EnrolTotp'; data: { userId: number; secret: SealedValue; recoveryCodeHashes: readonly string[] } }
  | { type: 'UseRecoveryCode'; data: RecoveryCodeUsed['data'] };

/** The only message of a refused recovery code: unknown, spent and malformed look the same. */
export const RECOVERY_CODE_REJECTED = 'the recovery code is not valid';

const SHA256_HEX = new RegExp(SHA256_HEX_PATTERN);

const added = <T>(set: ReadonlySet<T>, value: T): ReadonlySet<T> => (set.has(value) ? set : new Set([...set, value]));

export const credentialsDecider: Decider<CredentialsCommand, UserCredentialEvent, CredentialsState> = {
  initialState: () => ({ totp: null, recoveryCodes: new Set(), passkeys: new Set(), federatedIssuers: new Set() }),

  evolve(state, event) {
    switch (event.type) {
      case 'TotpEnrolled':
        return { ...state, totp: event.data.secret };
      case 'RecoveryCodesIssued':
        return { ...state, recoveryCodes: new Set(event.data.codeHashes) };
      case 'RecoveryCodeUsed': {
        const recoveryCodes = new Set(state.recoveryCodes);
        recoveryCodes.delete(event.data.codeHash);
        return { ...state, recoveryCodes };
      }
      case 'PasskeyRegistered':
        return { ...state, passkeys: added(state.passkeys, event.data.credentialId) };
      case 'FederatedIdentityLinked':
        return { ...state, federatedIssuers: added(state.federatedIssuers, event.data.issuer) };
      case 'PasskeyUsed':
        return state;
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'EnrolTotp': {
        const { userId, secret, recoveryCodeHashes } = command.data;
        const hashes = [...new Set(recoveryCodeHashes)];
        if (hashes.length === 0 || hashes.length !== recoveryCodeHashes.length || !hashes.every((h) => SHA256_HEX.test(h))) {
          throw new ValidationError('the recovery codes are malformed');
        }
        if (state.totp !== null) throw new ConflictError('an authenticator app is already set up for this account');
        const enrolled: TotpEnrolled = { type: 'TotpEnrolled', data: { userId, secret } };
        const issued: RecoveryCodesIssued = { type: 'RecoveryCodesIssued', data: { userId, codeHashes: hashes } };
        return [enrolled, issued];
      }
      case 'UseRecoveryCode': {
        const { userId, codeHash } = command.data;
        // Without a TOTP factor there is nothing to recover: a leftover code signs nobody in.
        if (state.totp === null || !state.recoveryCodes.has(codeHash)) throw new ValidationError(RECOVERY_CODE_REJECTED);
        const used: RecoveryCodeUsed = { type: 'RecoveryCodeUsed', data: { userId, codeHash } };
        return [used];
      }
    }
  },
};

/** The password alone is not enough for this user. */
export function hasSecondFactor(state: CredentialsState): boolean {
  return state.totp !== null;
}
