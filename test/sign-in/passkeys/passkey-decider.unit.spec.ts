import { expect } from 'chai';
import { deciderSpec } from '../../support/given-when-then.js';
import { ConflictError, ValidationError } from '../../../shared/errors.js';
import type { PasskeyRegistered, PasskeyUsed, TotpEnrolled, UserCredentialEvent } from '../../../shared/oauth/oauth-events.js';
import { counterAdvanced, passkeyDecider, type PasskeyCommand } from '../../../shared/sign-in/passkeys/passkey-decider.js';
import { fold } from '../../../shared/domain/decider.js';
import { expectSchemaValid } from '../../oauth/oauth-fixtures.js';

const spec = deciderSpec(passkeyDecider);
const USER = 42;
const CREDENTIAL = 'Y3JlZGVudGlhbC1vbmU';
const OTHER = 'Y3JlZGVudGlhbC10d28';
const PUBLIC_KEY = 'pQECAyYgASFYIA';

const registered = (credentialId = CREDENTIAL, counter = 1): PasskeyRegistered => ({
  type: 'PasskeyRegistered',
  data: { userId: USER, credentialId, publicKey: PUBLIC_KEY, counter, transports: ['internal'] },
});
const used = (counter: number, credentialId = CREDENTIAL): PasskeyUsed => ({ type: 'PasskeyUsed', data: { userId: USER, credentialId, counter } });
const register = (credentialId = CREDENTIAL, counter = 1): PasskeyCommand => ({ type: 'RegisterPasskey', data: registered(credentialId, counter).data });
const use = (counter: number, credentialId = CREDENTIAL): PasskeyCommand => ({ type: 'UsePasskey', data: used(counter, credentialId).data });
const totp: TotpEnrolled = {
  type: 'TotpEnrolled',
  data: { userId: USER, secret: { keyId: 'k1', iv: 'AAAAAAAAAAAAAAAA', ciphertext: 'c2VjcmV0', tag: 'AAAAAAAAAAAAAAAAAAAAAA' } },
};

describe('passkey decider', () => {
  describe('RegisterPasskey', () => {
    it('registers a new credential', () => {
      expectSchemaValid(spec.given([]).when(register()).then([registered()]));
    });

    it('registers a second, different credential', () => {
      spec.given([registered()]).when(register(OTHER)).then([registered(OTHER)]);
    });

    it('refuses a credential id that is already registered', () => {
      spec.given([registered()]).when(register()).thenThrows(ConflictError);
    });

    it('drops repeated transports', () => {
      const command: PasskeyCommand = { type: 'RegisterPasskey', data: { ...registered().data, transports: ['usb', 'usb', 'nfc'] } };
      spec.given([]).when(command).then([{ ...registered(), data: { ...registered().data, transports: ['usb', 'nfc'] } }]);
    });

    it('refuses a malformed credential id or counter', () => {
      spec.given([]).when(register('not base64url!')).thenThrows(ValidationError);
      spec.given([]).when(register(CREDENTIAL, -1)).thenThrows(ValidationError);
      spec.given([]).when(register(CREDENTIAL, 2 ** 32)).thenThrows(ValidationError);
    });
  });

  describe('UsePasskey', () => {
    it('records a sign-in whose counter went up', () => {
      expectSchemaValid(spec.given([registered(CREDENTIAL, 1)]).when(use(2)).then([used(2)]));
    });

    it('compares with the counter of the last sign-in, not of the registration', () => {
      spec.given([registered(CREDENTIAL, 1), used(7)]).when(use(7)).thenThrows(ValidationError, /^passkey sign-in failed$/);
      spec.given([registered(CREDENTIAL, 1), used(7)]).when(use(8)).then([used(8)]);
    });

    it('refuses a counter that went back or stayed (clone detection)', () => {
      spec.given([registered(CREDENTIAL, 5)]).when(use(4)).thenThrows(ValidationError, /^passkey sign-in failed$/);
      spec.given([registered(CREDENTIAL, 5)]).when(use(5)).thenThrows(ValidationError);
      spec.given([registered(CREDENTIAL, 5)]).when(use(0)).thenThrows(ValidationError);
    });

    it('accepts a counter of 0 from an authenticator that keeps none', () => {
      spec.given([registered(CREDENTIAL, 0), used(0)]).when(use(0)).then([used(0)]);
    });

    it('refuses an unknown credential with the same message', () => {
      spec.given([registered(OTHER)]).when(use(2)).thenThrows(ValidationError, /^passkey sign-in failed$/);
    });

    it('keeps the counters of several credentials apart', () => {
      spec.given([registered(CREDENTIAL, 1), registered(OTHER, 1), used(9, OTHER)]).when(use(2)).then([used(2)]);
    });
  });

  describe('RemovePasskey', () => {
    const remove = (credentialId = CREDENTIAL, otherWayToSignIn = true): PasskeyCommand => ({
      type: 'RemovePasskey',
      data: { userId: USER, credentialId, otherWayToSignIn },
    });
    const removed = (credentialId = CREDENTIAL): UserCredentialEvent => ({ type: 'PasskeyRemoved', data: { userId: USER, credentialId } });

    it('removes a registered passkey, which then signs in no more and may be registered anew', () => {
      expectSchemaValid(spec.given([registered(), registered(OTHER)]).when(remove()).then([removed()]));
      spec.given([registered(), removed()]).when(use(2)).thenThrows(ValidationError);
      spec.given([registered(), removed()]).when(register()).then([registered()]);
      spec.given([registered(), registered(OTHER), removed()]).when(use(2, OTHER)).then([used(2, OTHER)]);
    });

    it('refuses the last passkey of a user with no other way to sign in, not one of two', () => {
      spec.given([registered()]).when(remove(CREDENTIAL, false)).thenThrows(ConflictError, /only way to sign in/);
      spec.given([registered(), registered(OTHER)]).when(remove(CREDENTIAL, false)).then([removed()]);
      spec.given([registered(), registered(OTHER), removed()]).when(remove(OTHER, false)).thenThrows(ConflictError);
    });

    it('records nothing for a passkey removed already or never registered', () => {
      spec.given([registered(), removed()]).when(remove()).thenNothing();
      spec.given([registered()]).when(remove(OTHER)).thenNothing();
    });
  });

  it('ignores the other events of the credentials stream', () => {
    const history: UserCredentialEvent[] = [totp, registered(), { type: 'RecoveryCodeUsed', data: { userId: USER, codeHash: 'a'.repeat(64) } }];
    const state = fold(passkeyDecider, history);
    expect([...state.passkeys.keys()]).to.deep.equal([CREDENTIAL]);
  });

  it('counterAdvanced: up, or both zero', () => {
    expect(counterAdvanced(0, 0)).to.equal(true);
    expect(counterAdvanced(0, 1)).to.equal(true);
    expect(counterAdvanced(3, 4)).to.equal(true);
    expect(counterAdvanced(3, 3)).to.equal(false);
    expect(counterAdvanced(3, 0)).to.equal(false);
  });
});
