import { expect } from 'chai';
import { openCookieValue, sealCookieValue } from '../../shared/sign-in/sealed-cookie.js';

const key = Buffer.alloc(32, 3);
const now = new Date('2025-06-01T10:00:00.000Z');
const later = (seconds: number) => new Date(now.getTime() + seconds * 1000);

describe('sealed cookies', () => {
  const value = { userId: 42, secret: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP' };
  const sealed = sealCookieValue(key, 'gp_totp', value, later(600));

  it('opens to the sealed value before it expires, with the same key and purpose', () => {
    expect(openCookieValue(key, 'gp_totp', sealed, now)).to.deep.equal(value);
  });

  it('is cookie-safe and hides the value', () => {
    expect(sealed).to.match(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(sealed).to.not.include('JBSWY3DP');
    expect(Buffer.from(sealed.split('.')[2]!, 'base64url').toString('latin1')).to.not.include('JBSWY3DP');
  });

  it('does not open once expired', () => {
    expect(openCookieValue(key, 'gp_totp', sealed, later(600))).to.equal(null);
  });

  it('does not open for another purpose or with another key', () => {
    expect(openCookieValue(key, 'gp_authz', sealed, now)).to.equal(null);
    expect(openCookieValue(Buffer.alloc(32, 4), 'gp_totp', sealed, now)).to.equal(null);
  });

  it('does not open when altered, truncated, empty or absent', () => {
    const parts = sealed.split('.');
    const ciphertext = parts[2]!;
    const flipped = (ciphertext[0] === 'A' ? 'B' : 'A') + ciphertext.slice(1);
    expect(openCookieValue(key, 'gp_totp', [parts[0], parts[1], flipped, parts[3]].join('.'), now)).to.equal(null);
    expect(openCookieValue(key, 'gp_totp', sealed.slice(0, -2), now)).to.equal(null);
    expect(openCookieValue(key, 'gp_totp', '', now)).to.equal(null);
    expect(openCookieValue(key, 'gp_totp', undefined, now)).to.equal(null);
    expect(openCookieValue(key, 'gp_totp', 'v1.not.a.box', now)).to.equal(null);
  });

  it('seals the same value differently each time (fresh IV)', () => {
    expect(sealCookieValue(key, 'gp_totp', value, later(600))).to.not.equal(sealed);
  });
});
