import { expect } from 'chai';
import { fold } from '../../shared/domain/decider.js';
import { ConflictError, ValidationError } from '../../shared/errors.js';
import type { UserCredentialEvent } from '../../shared/oauth/oauth-events.js';
import { sha256Hex } from '../../shared/oauth/opaque-credentials.js';
import { credentialsDecider, hasSecondFactor, TOTP_CODE_REFUSED, type CredentialsCommand } from '../../shared/sign-in/credentials-decider.js';
import { deciderSpec } from '../support/given-when-then.js';
import { expectSchemaValid } from '../oauth/oauth-fixtures.js';

const spec = deciderSpec(credentialsDecider);
const secret = { keyId: '2b1f0d0e-1b7e-4c38-9d55-0c8f7e9f0a11', iv: 'AAAAAAAAAAAAAAAA', ciphertext: 'c2VjcmV0', tag: 'AAAAAAAAAAAAAAAAAAAAAA' };
const r1 = sha256Hex('r1');
const r2 = sha256Hex('r2');
const r3 = sha256Hex('r3');
const enrolled: UserCredentialEvent = { type: 'TotpEnrolled', data: { userId: 42, secret } };
const issued = (...codeHashes: string[]): UserCredentialEvent => ({ type: 'RecoveryCodesIssued', data: { userId: 42, codeHashes } });
const used = (codeHash: string): UserCredentialEvent => ({ type: 'RecoveryCodeUsed', data: { userId: 42, codeHash } });
/** The time step of the code that confirmed the enrolment in these tests (2025-06-01T10:00Z / 30 s). */
const STEP = 58_292_400;
const accepted = (timeStep: number): UserCredentialEvent => ({ type: 'TotpCodeAccepted', data: { userId: 42, timeStep } });
const enrolAt = (acceptedStep: number, ...recoveryCodeHashes: string[]): CredentialsCommand => ({
  type: 'EnrolTotp',
  data: { userId: 42, secret, recoveryCodeHashes, acceptedStep },
});
const enrol = (...recoveryCodeHashes: string[]): CredentialsCommand => enrolAt(STEP, ...recoveryCodeHashes);
const useCode = (codeHash: string): CredentialsCommand => ({ type: 'UseRecoveryCode', data: { userId: 42, codeHash } });
const acceptCode = (timeStep: number): CredentialsCommand => ({ type: 'AcceptTotpCode', data: { userId: 42, timeStep } });
/** What an enrolment appends: the factor, its recovery codes, and the confirming code spent. */
const enrolment = (...codeHashes: string[]): UserCredentialEvent[] => [enrolled, issued(...codeHashes), accepted(STEP)];
const passkey: UserCredentialEvent = {
  type: 'PasskeyRegistered',
  data: { userId: 42, credentialId: 'Y3JlZA', publicKey: 'cHVibGlj', counter: 0, transports: ['internal'] },
};
const passkeyUsed: UserCredentialEvent = { type: 'PasskeyUsed', data: { userId: 42, credentialId: 'Y3JlZA', counter: 3 } };
const linked: UserCredentialEvent = { type: 'FederatedIdentityLinked', data: { userId: 42, orgId: 7, issuer: 'https://upstream.example', subject: 'abc' } };

describe('credentials decider', () => {
  describe('EnrolTotp', () => {
    it('given no factor, records TotpEnrolled, RecoveryCodesIssued and the confirming code\'s TotpCodeAccepted in one go (schema-valid)', () => {
      expectSchemaValid(spec.given([]).when(enrol(r1, r2)).then([enrolled, issued(r1, r2), accepted(STEP)]));
    });

    it('spends the code that confirmed the enrolment: its step cannot be accepted afterwards, the next one can', () => {
      spec.given(enrolment(r1)).when(acceptCode(STEP)).thenThrows(ValidationError, /not valid/);
      spec.given(enrolment(r1)).when(acceptCode(STEP + 1)).then([accepted(STEP + 1)]);
    });

    it('refuses a confirming time step that is not a non-negative integer', () => {
      for (const step of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
        spec.given([]).when(enrolAt(step, r1)).thenThrows(ValidationError, /time step/);
      }
    });

    it('refuses a second enrolment while one is active', () => {
      spec.given(enrolment(r1)).when(enrol(r2)).thenThrows(ConflictError);
    });

    it('refuses no recovery codes, a repeated one, or something that is not a SHA-256 hex', () => {
      spec.given([]).when(enrol()).thenThrows(ValidationError);
      spec.given([]).when(enrol(r1, r1)).thenThrows(ValidationError);
      spec.given([]).when(enrol('plain-code')).thenThrows(ValidationError);
    });
  });

  describe('UseRecoveryCode', () => {
    it('spends an unused code of the current set', () => {
      expectSchemaValid(spec.given([enrolled, issued(r1, r2)]).when(useCode(r2)).then([used(r2)]));
    });

    it('refuses a code that was already used: each works once', () => {
      spec.given([enrolled, issued(r1, r2), used(r1)]).when(useCode(r1)).thenThrows(ValidationError, /not valid/);
    });

    it('refuses an unknown code, and a code of an earlier set (a new set replaces the old one)', () => {
      spec.given([enrolled, issued(r1, r2)]).when(useCode(r3)).thenThrows(ValidationError, /not valid/);
      spec.given([enrolled, issued(r1, r2), issued(r3)]).when(useCode(r1)).thenThrows(ValidationError, /not valid/);
      spec.given([enrolled, issued(r1, r2), issued(r3)]).when(useCode(r3)).then([used(r3)]);
    });

    it('refuses every code when no TOTP factor is enrolled', () => {
      spec.given([issued(r1)]).when(useCode(r1)).thenThrows(ValidationError);
    });
  });

  describe('AcceptTotpCode', () => {
    it('records a step later than the last one accepted (schema-valid), and folds it as the last step', () => {
      expectSchemaValid(spec.given(enrolment(r1)).when(acceptCode(STEP + 2)).then([accepted(STEP + 2)]));
      spec.given(enrolment(r1)).when(acceptCode(STEP + 2)).thenInspect((_, state) => expect(state.lastTotpStep).to.equal(STEP + 2));
    });

    it('refuses the same step again and any earlier step: each code works once (RFC 6238 §5.2)', () => {
      const history = [...enrolment(r1), accepted(STEP + 2)];
      spec.given(history).when(acceptCode(STEP + 2)).thenThrows(ValidationError, /not valid/);
      spec.given(history).when(acceptCode(STEP + 1)).thenThrows(ValidationError, /not valid/);
      const refused = spec.given(history).when(acceptCode(STEP)).thenThrows(ValidationError);
      expect(refused.message).to.equal(TOTP_CODE_REFUSED);
      spec.given(history).when(acceptCode(STEP + 3)).then([accepted(STEP + 3)]);
    });

    it('given an enrolment recorded before steps were (no TotpCodeAccepted yet), accepts the first code', () => {
      spec.given([enrolled, issued(r1)]).when(acceptCode(STEP)).then([accepted(STEP)]);
    });

    it('refuses every step when no TOTP factor is enrolled', () => {
      spec.given([]).when(acceptCode(STEP)).thenThrows(ValidationError, /not valid/);
      spec.given([passkey, linked]).when(acceptCode(STEP)).thenThrows(ValidationError, /not valid/);
    });

    it('refuses a step that is not a non-negative integer', () => {
      for (const step of [-1, 1.5, Number.NaN]) spec.given(enrolment(r1)).when(acceptCode(step)).thenThrows(ValidationError, /not valid/);
    });

    it('leaves the recovery codes alone, and a recovery code leaves the last step alone', () => {
      spec.given([...enrolment(r1, r2), accepted(STEP + 1)]).when(useCode(r2)).then([used(r2)]);
      spec.given([...enrolment(r1, r2), used(r1)]).when(acceptCode(STEP)).thenThrows(ValidationError, /not valid/);
      spec.given([...enrolment(r1, r2), used(r1)]).when(acceptCode(STEP + 1)).then([accepted(STEP + 1)]);
    });
  });

  describe('the other methods on the same stream', () => {
    it('folds passkey and federated events harmlessly, and still decides on TOTP', () => {
      spec.given([passkey, passkeyUsed, linked]).when(enrol(r1)).then(enrolment(r1));
      spec.given([enrolled, passkey, issued(r1), passkeyUsed, linked]).when(useCode(r1)).then([used(r1)]);
    });

    it('describes the account: second factor, passkeys (each once), providers', () => {
      const before = fold(credentialsDecider, [passkey, passkey, passkeyUsed, linked]);
      expect(hasSecondFactor(before)).to.equal(false);
      expect(before.lastTotpStep).to.equal(null);
      expect(before.passkeys.size).to.equal(1);
      expect([...before.federatedIssuers]).to.deep.equal(['https://upstream.example']);
      const after = fold(credentialsDecider, [passkey, ...enrolment(r1, r2), used(r1), accepted(STEP + 1)]);
      expect(hasSecondFactor(after)).to.equal(true);
      expect(after.totp).to.deep.equal(secret);
      expect([...after.recoveryCodes]).to.deep.equal([r2]);
      expect(after.lastTotpStep).to.equal(STEP + 1);
    });
  });
});
