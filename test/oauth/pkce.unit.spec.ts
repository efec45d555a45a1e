import { expect } from 'chai';
import { isValidCodeVerifier, isValidS256Challenge, s256Challenge, verifyCodeVerifier } from '../../shared/oauth/pkce.js';

describe('PKCE (RFC 7636, S256 only)', () => {
  // RFC 7636 Appendix B.
  const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
  const challenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

  it('computes the RFC 7636 Appendix B challenge', () => {
    expect(s256Challenge(verifier)).to.equal(challenge);
  });

  it('verifies the matching verifier', () => {
    expect(verifyCodeVerifier(verifier, challenge)).to.equal(true);
  });

  it('rejects a different verifier, the challenge itself as verifier, and plain', () => {
    expect(verifyCodeVerifier(verifier.replace(/k$/, 'K'), challenge)).to.equal(false);
    expect(verifyCodeVerifier(challenge, challenge)).to.equal(false);
    // `plain` would compare the verifier with the challenge directly: never accepted.
    expect(verifyCodeVerifier(verifier, verifier)).to.equal(false);
  });

  describe('code_verifier: 43 to 128 characters of [A-Z a-z 0-9 - . _ ~]', () => {
    it('accepts the bounds and every unreserved character', () => {
      expect(isValidCodeVerifier('a'.repeat(43))).to.equal(true);
      expect(isValidCodeVerifier('a'.repeat(128))).to.equal(true);
      expect(isValidCodeVerifier(`${'Az09'.repeat(10)}-._~`)).to.equal(true);
    });
    const bad: Array<[string, string]> = [
      ['42 characters', 'a'.repeat(42)],
      ['129 characters', 'a'.repeat(129)],
      ['empty', ''],
      ['a space', `${'a'.repeat(42)} `],
      ['a plus', `${'a'.repeat(42)}+`],
      ['a slash', `${'a'.repeat(42)}/`],
      ['an equals sign (padding)', `${'a'.repeat(42)}=`],
      ['a percent-encoding', `${'a'.repeat(40)}%41`],
      ['non-ASCII', `${'a'.repeat(42)}é`],
      ['a newline', `${'a'.repeat(42)}\n`],
    ];
    for (const [what, value] of bad) {
      it(`rejects ${what}`, () => {
        expect(isValidCodeVerifier(value)).to.equal(false);
        expect(verifyCodeVerifier(value, s256Challenge(value))).to.equal(false);
      });
    }
  });

  describe('code_challenge: base64url of exactly 32 bytes', () => {
    it('accepts a real challenge', () => {
      expect(isValidS256Challenge(challenge)).to.equal(true);
    });
    const bad: Array<[string, string]> = [
      ['42 characters', challenge.slice(0, 42)],
      ['44 characters', `${challenge}A`],
      ['padding', `${challenge.slice(0, 42)}=`],
      ['standard base64 characters', challenge.replace('-', '+')],
      ['a non-canonical last character (unused bits set)', `${challenge.slice(0, 42)}N`],
      ['empty', ''],
    ];
    for (const [what, value] of bad) {
      it(`rejects ${what}`, () => {
        expect(isValidS256Challenge(value)).to.equal(false);
        expect(verifyCodeVerifier(verifier, value)).to.equal(false);
      });
    }
  });
});
