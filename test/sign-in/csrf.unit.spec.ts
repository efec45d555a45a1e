import { expect } from 'chai';
import { CsrfTokenRejected, csrfTokenFor, csrfTokenMatches, isCsrfSecret, newCsrfSecret } from '../../shared/sign-in/csrf.js';
import { signInKeys } from '../../shared/sign-in/cookie-keys.js';

const keys = signInKeys(Buffer.alloc(32, 9));
const otherKeys = signInKeys(Buffer.alloc(32, 8));

describe('CSRF tokens (synchronizer token bound to the CSRF cookie)', () => {
  const secret = newCsrfSecret();
  const token = csrfTokenFor(keys.csrfKey, secret);

  it('accepts the token of the cookie it was made for', () => {
    expect(csrfTokenMatches(keys.csrfKey, secret, token)).to.equal(true);
  });

  it('refuses the token of another cookie, another key, an altered token and the secret itself', () => {
    expect(csrfTokenMatches(keys.csrfKey, newCsrfSecret(), token)).to.equal(false);
    expect(csrfTokenMatches(otherKeys.csrfKey, secret, token)).to.equal(false);
    const altered = (token[0] === 'A' ? 'B' : 'A') + token.slice(1);
    expect(csrfTokenMatches(keys.csrfKey, secret, altered)).to.equal(false);
    expect(csrfTokenMatches(keys.csrfKey, secret, secret)).to.equal(false);
  });

  it('refuses a missing cookie, a missing token, a token of another length and a non-string', () => {
    expect(csrfTokenMatches(keys.csrfKey, undefined, token)).to.equal(false);
    expect(csrfTokenMatches(keys.csrfKey, secret, undefined)).to.equal(false);
    expect(csrfTokenMatches(keys.csrfKey, secret, '')).to.equal(false);
    expect(csrfTokenMatches(keys.csrfKey, secret, `${token}x`)).to.equal(false);
    expect(csrfTokenMatches(keys.csrfKey, secret, [token])).to.equal(false);
  });

  it('makes 256-bit base64url secrets and recognises only that shape', () => {
    expect(secret).to.match(/^[A-Za-z0-9_-]{43}$/);
    expect(newCsrfSecret()).to.not.equal(secret);
    expect(isCsrfSecret(secret)).to.equal(true);
    expect(isCsrfSecret('short')).to.equal(false);
    expect(isCsrfSecret(undefined)).to.equal(false);
  });

  it('is rejected with 403', () => {
    const error = new CsrfTokenRejected();
    expect(error.status).to.equal(403);
    expect(error.code).to.equal('csrf_token_invalid');
  });

  it('derives distinct keys per purpose from the key-encryption key', () => {
    expect(keys.csrfKey.equals(keys.cookieKey)).to.equal(false);
    expect(keys.csrfKey).to.have.length(32);
    expect(() => signInKeys(Buffer.alloc(16))).to.throw(RangeError);
  });
});
