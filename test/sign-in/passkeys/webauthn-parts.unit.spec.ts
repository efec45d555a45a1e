import { expect } from 'chai';
import { encodedUserHandleOf, relyingPartyOf, userHandleOf } from '../../../shared/sign-in/passkeys/relying-party.js';
import { knownTransports, parseAuthenticationResponse, parseRegistrationResponse } from '../../../shared/sign-in/passkeys/webauthn-responses.js';
import { ValidationError } from '../../../shared/errors.js';

describe('relying party', () => {
  it('is the issuer: RP ID its host name, origin its origin', () => {
    expect(relyingPartyOf('https://signin.example.com')).to.include({ id: 'signin.example.com', origin: 'https://signin.example.com' });
    expect(relyingPartyOf('http://127.0.0.1:8080')).to.include({ id: '127.0.0.1', origin: 'http://127.0.0.1:8080' });
  });

  it('encodes the user handle as the decimal user id', () => {
    expect(Buffer.from(userHandleOf(42)).toString('utf8')).to.equal('42');
    expect(encodedUserHandleOf(42)).to.equal(Buffer.from('42').toString('base64url'));
  });
});

describe('WebAuthn response bodies', () => {
  const assertion = { id: 'abc', rawId: 'abc', type: 'public-key', response: { clientDataJSON: 'e30', authenticatorData: 'AA', signature: 'AA' } };

  it('reads the credential from JSON or from a form field holding JSON', () => {
    expect(parseAuthenticationResponse({ credential: assertion }).id).to.equal('abc');
    expect(parseAuthenticationResponse({ credential: JSON.stringify(assertion), csrf: 'x' }).id).to.equal('abc');
  });

  it('refuses a missing, malformed or oversized credential', () => {
    expect(() => parseAuthenticationResponse({})).to.throw(ValidationError);
    expect(() => parseAuthenticationResponse({ credential: '{not json' })).to.throw(ValidationError);
    expect(() => parseAuthenticationResponse({ credential: { ...assertion, type: 'password' } })).to.throw(ValidationError);
    expect(() => parseAuthenticationResponse({ credential: { ...assertion, id: 'a+b' } })).to.throw(ValidationError);
    expect(() => parseRegistrationResponse({ credential: { ...assertion, response: { clientDataJSON: 'e30', attestationObject: 'A'.repeat(70_000) } } })).to.throw(
      ValidationError,
    );
  });

  it('keeps only the transports WebAuthn defines', () => {
    expect(knownTransports(['internal', 'hybrid', 'internal', 'carrier-pigeon'])).to.deep.equal(['internal', 'hybrid']);
    expect(knownTransports(undefined)).to.deep.equal([]);
  });
});
