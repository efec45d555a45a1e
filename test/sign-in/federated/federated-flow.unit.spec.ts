import { expect } from 'chai';
import { openFederatedFlow, sealFederatedFlow, FEDERATED_FLOW_TTL_SECONDS } from '../../../shared/sign-in/federated/federated-flow-cookie.js';
import { emailVerified, linkableEmail, soleMatch } from '../../../shared/sign-in/federated/federated-account.js';
import { signInKeys } from '../../../shared/sign-in/cookie-keys.js';
import { sealCookieValue } from '../../../shared/sign-in/sealed-cookie.js';

const KEY = signInKeys(Buffer.alloc(32, 1)).cookieKey;
const OTHER_KEY = signInKeys(Buffer.alloc(32, 2)).cookieKey;
const NOW = new Date('2025-06-01T10:00:00Z');
const FLOW = { issuer: 'https://idp.example.com', state: 'state-1', nonce: 'nonce-1', codeVerifier: 'v'.repeat(43) };

describe('federated flow cookie', () => {
  it('opens what it sealed, until it expires', () => {
    const cookie = sealFederatedFlow(FLOW, KEY, NOW);
    expect(openFederatedFlow(cookie, KEY, NOW)).to.deep.equal(FLOW);
    expect(openFederatedFlow(cookie, KEY, new Date(NOW.getTime() + (FEDERATED_FLOW_TTL_SECONDS - 1) * 1000))).to.deep.equal(FLOW);
    expect(openFederatedFlow(cookie, KEY, new Date(NOW.getTime() + FEDERATED_FLOW_TTL_SECONDS * 1000))).to.equal(null);
  });

  it('hides the state, nonce and verifier from the cookie jar', () => {
    const cookie = sealFederatedFlow(FLOW, KEY, NOW);
    for (const secret of [FLOW.state, FLOW.nonce, FLOW.codeVerifier]) expect(cookie).not.to.include(secret);
    expect(Buffer.from(cookie.split('.')[2]!, 'base64url').toString('latin1')).not.to.include(FLOW.state);
  });

  it('refuses a missing, altered or foreign cookie', () => {
    const cookie = sealFederatedFlow(FLOW, KEY, NOW);
    expect(openFederatedFlow(undefined, KEY, NOW)).to.equal(null);
    expect(openFederatedFlow(cookie, OTHER_KEY, NOW)).to.equal(null);
    const parts = cookie.split('.');
    const body = Buffer.from(parts[2]!, 'base64url');
    body[0] = body[0]! ^ 1;
    parts[2] = body.toString('base64url');
    expect(openFederatedFlow(parts.join('.'), KEY, NOW)).to.equal(null);
  });

  it('refuses a cookie sealed for another purpose or of another shape', () => {
    const later = new Date(NOW.getTime() + 60_000);
    expect(openFederatedFlow(sealCookieValue(KEY, 'sign-in-flow', Object.values(FLOW), later), KEY, NOW)).to.equal(null);
    expect(openFederatedFlow(sealCookieValue(KEY, 'federated-sign-in', ['a', 'b'], later), KEY, NOW)).to.equal(null);
    expect(openFederatedFlow(sealCookieValue(KEY, 'federated-sign-in', ['a', 'b', '', 'd'], later), KEY, NOW)).to.equal(null);
  });
});

describe('federated account matching', () => {
  it('takes an email the provider says is verified, lower-cased', () => {
    expect(linkableEmail({ email: 'Ada@Example.COM', email_verified: true })).to.equal('ada@example.com');
    // Some providers send the boolean as a string.
    expect(linkableEmail({ email: 'ada@example.com', email_verified: 'true' })).to.equal('ada@example.com');
  });

  it('refuses an email the provider does not say is verified', () => {
    expect(linkableEmail({ email: 'ada@example.com' })).to.equal(null);
    expect(linkableEmail({ email: 'ada@example.com', email_verified: false })).to.equal(null);
    expect(linkableEmail({ email: 'ada@example.com', email_verified: 'false' })).to.equal(null);
    for (const other of [null, 1, 'yes', 'TRUE', ' true', {}, [true]]) {
      expect(linkableEmail({ email: 'ada@example.com', email_verified: other }), JSON.stringify(other)).to.equal(null);
    }
  });

  it('takes it whatever email_verified says when the operator vouches for the upstream\'s addresses (FEDERATED_TRUST_EMAIL)', () => {
    expect(linkableEmail({ email: 'ada@example.com' }, true)).to.equal('ada@example.com');
    expect(linkableEmail({ email: 'ada@example.com', email_verified: false }, true)).to.equal('ada@example.com');
    expect(linkableEmail({ email: 'not an email' }, true)).to.equal(null);
  });

  it('says verified for true and "true" only', () => {
    expect(emailVerified({ email_verified: true })).to.equal(true);
    expect(emailVerified({ email_verified: 'true' })).to.equal(true);
    expect(emailVerified({})).to.equal(false);
    expect(emailVerified({ email_verified: 'false' })).to.equal(false);
  });

  it('refuses a missing or malformed email', () => {
    expect(linkableEmail(null)).to.equal(null);
    expect(linkableEmail({})).to.equal(null);
    expect(linkableEmail({ email_verified: true })).to.equal(null);
    expect(linkableEmail({ email: 42, email_verified: true })).to.equal(null);
    expect(linkableEmail({ email: 'not an email', email_verified: true })).to.equal(null);
    expect(linkableEmail({ email: `${'a'.repeat(250)}@example.com`, email_verified: true })).to.equal(null);
  });

  it('matches exactly one user, never guesses among several', () => {
    expect(soleMatch([])).to.equal(null);
    expect(soleMatch([{ id: 1 }])).to.deep.equal({ id: 1 });
    expect(soleMatch([{ id: 1 }, { id: 2 }])).to.equal(null);
  });
});
