import { expect } from 'chai';
import { CEREMONY_TTL_SECONDS, PasskeyChallenges } from '../../../command-service/sign-in/passkeys/passkey-challenges.js';
import { encodedUserHandleOf, relyingPartyOf, userHandleOf } from '../../../shared/sign-in/passkeys/relying-party.js';
import { knownTransports, parseAuthenticationResponse, parseRegistrationResponse } from '../../../shared/sign-in/passkeys/webauthn-responses.js';
import { ValidationError } from '../../../shared/errors.js';

const NOW = new Date('2025-06-01T10:00:00Z');
const later = (seconds: number) => new Date(NOW.getTime() + seconds * 1000);

describe('passkey challenges', () => {
  it('gives a ceremony back once', () => {
    const challenges = new PasskeyChallenges();
    const handle = challenges.begin({ purpose: 'authentication', challenge: 'c1', userId: null }, NOW);
    expect(challenges.take(handle, 'authentication', NOW)).to.include({ challenge: 'c1', purpose: 'authentication' });
    expect(challenges.take(handle, 'authentication', NOW)).to.equal(null);
  });

  it('refuses an expired ceremony', () => {
    const challenges = new PasskeyChallenges();
    const handle = challenges.begin({ purpose: 'authentication', challenge: 'c1', userId: null }, NOW);
    expect(challenges.take(handle, 'authentication', later(CEREMONY_TTL_SECONDS))).to.equal(null);
  });

  it('refuses a ceremony of the other purpose, and spends it', () => {
    const challenges = new PasskeyChallenges();
    const handle = challenges.begin({ purpose: 'registration', challenge: 'c1', userId: 7 }, NOW);
    expect(challenges.take(handle, 'authentication', NOW)).to.equal(null);
    expect(challenges.take(handle, 'registration', NOW)).to.equal(null);
  });

  it('refuses an unknown or missing handle', () => {
    const challenges = new PasskeyChallenges();
    challenges.begin({ purpose: 'authentication', challenge: 'c1', userId: null }, NOW);
    expect(challenges.take('someone-elses-handle', 'authentication', NOW)).to.equal(null);
    expect(challenges.take(undefined, 'authentication', NOW)).to.equal(null);
  });

  it("replaces the browser's previous ceremony", () => {
    const challenges = new PasskeyChallenges();
    const first = challenges.begin({ purpose: 'authentication', challenge: 'c1', userId: null }, NOW);
    const second = challenges.begin({ purpose: 'authentication', challenge: 'c2', userId: null }, NOW, first);
    expect(challenges.take(first, 'authentication', NOW)).to.equal(null);
    expect(challenges.take(second, 'authentication', NOW)?.challenge).to.equal('c2');
  });

  it('keeps at most its bound, dropping the oldest', () => {
    const challenges = new PasskeyChallenges(2);
    const handles = ['a', 'b', 'c'].map((c) => challenges.begin({ purpose: 'authentication', challenge: c, userId: null }, NOW));
    expect(challenges.take(handles[0], 'authentication', NOW)).to.equal(null);
    expect(challenges.take(handles[2], 'authentication', NOW)?.challenge).to.equal('c');
  });
});

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
