import { expect } from 'chai';
import {
  authorizationCodeHash,
  digestsEqual,
  isFamilyId,
  newAuthorizationCode,
  newClientSecret,
  newFamilyId,
  newRefreshToken,
  parseRefreshToken,
  sha256Hex,
} from '../../shared/oauth/opaque-credentials.js';

describe('opaque credentials', () => {
  it('authorization codes carry 256 bits and are known by their hash', () => {
    const code = newAuthorizationCode();
    expect(code.value).to.match(/^[A-Za-z0-9_-]{43}$/);
    expect(code.hash).to.equal(sha256Hex(code.value)).and.match(/^[0-9a-f]{64}$/);
    expect(authorizationCodeHash(code.value)).to.equal(code.hash);
    expect(newAuthorizationCode().value).to.not.equal(code.value);
  });

  it('a presented code that cannot be ours has no hash (no stream is read for it)', () => {
    for (const bad of ['', 'short', `${'a'.repeat(43)}=`, 'a'.repeat(44), `${'a'.repeat(42)}+`]) {
      expect(authorizationCodeHash(bad)).to.equal(null);
    }
  });

  it('refresh tokens name their family and are known by the hash of the whole token', () => {
    const familyId = newFamilyId();
    expect(isFamilyId(familyId)).to.equal(true);
    const token = newRefreshToken(familyId);
    expect(token.value.startsWith(`${familyId}.`)).to.equal(true);
    expect(parseRefreshToken(token.value)).to.deep.equal({ familyId, hash: token.hash });
    expect(() => newRefreshToken('not-a-family')).to.throw(TypeError);
  });

  it('refuses malformed refresh tokens', () => {
    const familyId = newFamilyId();
    for (const bad of ['', familyId, `${familyId}.`, `${familyId}.short`, `${familyId.toUpperCase()}.${'a'.repeat(43)}`, `x${familyId}.${'a'.repeat(43)}`]) {
      expect(parseRefreshToken(bad), bad).to.equal(null);
    }
  });

  it('client secrets carry 256 bits, stored as SHA-256', () => {
    const secret = newClientSecret();
    expect(secret.value).to.match(/^[A-Za-z0-9_-]{43}$/);
    expect(secret.hash).to.equal(sha256Hex(secret.value));
  });

  it('compares digests in constant time and tolerates different lengths', () => {
    expect(digestsEqual(sha256Hex('a'), sha256Hex('a'))).to.equal(true);
    expect(digestsEqual(sha256Hex('a'), sha256Hex('b'))).to.equal(false);
    expect(digestsEqual(sha256Hex('a'), 'abc')).to.equal(false);
  });
});
