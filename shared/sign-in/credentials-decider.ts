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
//     revision, is what spends it, so two sign-ins racing with one code cannot both pass;
//   * a TOTP code works once (RFC 6238 §5.2): TotpCodeAccepted records its time step, and only a
//     later step is accepted afterwards. Kept in the stream, not in process memory, so a code
//     cannot be replayed on another replica, and the expected revision settles two submissions
//     of one code racing anywhere. The code that confirmed the enrolment is spent the same way.
import type { Decider } from '../domain/decider.js';
import { ConflictError, ValidationError } from '../errors.js';
import type {
  RecoveryCodeUsed,
  RecoveryCodesIssued,
  SealedValue,
  TotpCodeAccepted,
  TotpEnrolled,
  UserCredentialEvent,
} from '../oauth/oauth-events.js';
import { SHA256_HEX_PATTERN } from '../oauth/opaque-credentials.js';

export interface CredentialsState {
  /** The TOTP secret, sealed under the user's subject key; null until enrolled. */
  readonly totp: SealedValue | null;
  /** SHA-256 of the recovery codes of the current set that are still unused. */
  readonly recoveryCodes: ReadonlySet<string>;
  /** The RFC 6238 time step of the last TOTP code accepted; null before the first. */
  readonly lastTotpStep: number | null;
  /** Credential ids of the registered passkeys. */
  readonly passkeys: ReadonlySet<string>;
  /** Issuers of the linked upstream accounts. */
  readonly federatedIssuers: ReadonlySet<string>;
}

export type CredentialsCommand =
  | {
      type: 'EnrolTotp';
      /** `acceptedStep`: the time step of the code that confirmed the secret (spent by enrolling). */
      data: { userId: number; secret: SealedValue; recoveryCodeHashes: readonly string[]; acceptedStep: number };
    }
  | { type: 'UseRecoveryCode'; data: RecoveryCodeUsed['data'] }
  | { type: 'AcceptTotpCode'; data: TotpCodeAccepted['data'] };

/** The only message of a refused recovery code: unknown, spent and malformed look the same. */
export const RECOVERY_CODE_REJECTED = 'the recovery code is not valid';

/** The only message of a refused TOTP time step: no factor, already used and malformed look the same. */
export const TOTP_CODE_REFUSED = 'the authenticator code is not valid';

const SHA256_HEX = new RegExp(SHA256_HEX_PATTERN);

const isTimeStep = (step: number) => Number.isSafeInteger(step) && step >= 0;
const isAfterLastStep = (state: CredentialsState, step: number) => state.lastTotpStep === null || step > state.lastTotpStep;

const added = <T>(set: ReadonlySet<T>, value: T): ReadonlySet<T> => (set.has(value) ? set : new Set([...set, value]));

export const credentialsDecider: Decider<CredentialsCommand, UserCredentialEvent, CredentialsState> = {
  initialState: () => ({ totp: null, recoveryCodes: new Set(), lastTotpStep: null, passkeys: new Set(), federatedIssuers: new Set() }),

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
      case 'TotpCodeAccepted':
        return { ...state, lastTotpStep: event.data.timeStep };
      case 'PasskeyRegistered':
        return { ...state, passkeys: added(state.passkeys, event.data.credentialId) };
      case 'FederatedIdentityLinked':
        return { ...state, federatedIssuers: added(state.federatedIssuers, event.data.issuer) };
      case 'PasskeyRemoved': {
        const passkeys = new Set(state.passkeys);
        passkeys.delete(event.data.credentialId);
        return { ...state, passkeys };
      }
      case 'PasskeyUsed':
        return state;
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'EnrolTotp': {
        const { userId, secret, recoveryCodeHashes, acceptedStep } = command.data;
        const hashes = [...new Set(recoveryCodeHashes)];
        if (hashes.length === 0 || hashes.length !== recoveryCodeHashes.length || !hashes.every((h) => SHA256_HEX.test(h))) {
          throw new ValidationError('the recovery codes are malformed');
        }
        if (!isTimeStep(acceptedStep)) throw new ValidationError('the time step is malformed');
        if (state.totp !== null) throw new ConflictError('an authenticator app is already set up for this account');
        if (!isAfterLastStep(state, acceptedStep)) throw new ValidationError(TOTP_CODE_REFUSED);
        const enrolled: TotpEnrolled = { type: 'TotpEnrolled', data: { userId, secret } };
        const issued: RecoveryCodesIssued = { type: 'RecoveryCodesIssued', data: { userId, codeHashes: hashes } };
        // The confirming code is spent like any other, so it cannot also pass a sign-in.
        const accepted: TotpCodeAccepted = { type: 'TotpCodeAccepted', data: { userId, timeStep: acceptedStep } };
        return [enrolled, issued, accepted];
      }
      case 'UseRecoveryCode': {
        const { userId, codeHash } = command.data;
        // Without a TOTP factor there is nothing to recover: a leftover code signs nobody in.
        if (state.totp === null || !state.recoveryCodes.has(codeHash)) throw new ValidationError(RECOVERY_CODE_REJECTED);
        const used: RecoveryCodeUsed = { type: 'RecoveryCodeUsed', data: { userId, codeHash } };
        return [used];
      }
      case 'AcceptTotpCode': {
        const { userId, timeStep } = command.data;
        // Refused like a spent recovery code: no factor, a replayed step and a malformed one look the same.
        if (state.totp === null || !isTimeStep(timeStep) || !isAfterLastStep(state, timeStep)) throw new ValidationError(TOTP_CODE_REFUSED);
        const accepted: TotpCodeAccepted = { type: 'TotpCodeAccepted', data: { userId, timeStep } };
        return [accepted];
      }
    }
  },
};

/** The password alone is not enough for this user. */
export function hasSecondFactor(state: CredentialsState): boolean {
  return state.totp !== null;
}
