import { expect } from 'chai';
import { InvalidScope } from '../../shared/oauth/oauth-errors.js';
import {
  DEFAULT_SCOPES,
  OAUTH_SCOPES,
  SCOPE_DESCRIPTIONS,
  formatScope,
  isSubset,
  narrowedScopes,
  parseScopeParameter,
  requestedScopes,
} from '../../shared/oauth/scopes.js';

describe('scopes', () => {
  it('has exactly the spec table, each with a description for the consent page', () => {
    expect([...OAUTH_SCOPES]).to.deep.equal(['openid', 'profile', 'email', 'offline_access', 'passes:read', 'passes:write', 'invites:read', 'members:read']);
    for (const scope of OAUTH_SCOPES) expect(SCOPE_DESCRIPTIONS[scope]).to.be.a('string').and.not.equal('');
    expect([...DEFAULT_SCOPES]).to.deep.equal(['openid', 'profile', 'email']);
  });

  describe('parseScopeParameter (RFC 6749 §3.3 grammar)', () => {
    it('splits on single spaces and removes repeats', () => {
      expect(parseScopeParameter('openid email openid')).to.deep.equal(['openid', 'email']);
      expect(parseScopeParameter('passes:read')).to.deep.equal(['passes:read']);
    });
    for (const bad of [' openid', 'openid ', 'openid  email', 'openid\temail', 'openid\nemail', 'open"id', 'open\\id', 'openïd', '']) {
      it(`refuses ${JSON.stringify(bad)}`, () => {
        expect(parseScopeParameter(bad)).to.equal(null);
      });
    }
  });

  describe('requestedScopes (authorize)', () => {
    const allowed = ['openid', 'profile', 'email', 'passes:read'];

    it('defaults to openid profile email when absent or empty', () => {
      expect(requestedScopes(undefined, allowed)).to.deep.equal(['openid', 'profile', 'email']);
      expect(requestedScopes('', allowed)).to.deep.equal(['openid', 'profile', 'email']);
    });

    it('narrows the default to what the client may have', () => {
      expect(requestedScopes(undefined, ['openid', 'passes:read'])).to.deep.equal(['openid']);
      expect(() => requestedScopes(undefined, ['passes:read'])).to.throw(InvalidScope);
    });

    it('returns a subset in canonical order', () => {
      expect(requestedScopes('passes:read openid', allowed)).to.deep.equal(['openid', 'passes:read']);
    });

    it('refuses unknown, not allowed and malformed scopes with invalid_scope', () => {
      expect(() => requestedScopes('openid admin', allowed)).to.throw(InvalidScope);
      expect(() => requestedScopes('openid passes:write', allowed)).to.throw(InvalidScope);
      expect(() => requestedScopes('openid  profile', allowed)).to.throw(InvalidScope);
      expect(() => requestedScopes('OPENID', allowed)).to.throw(InvalidScope);
      expect(() => requestedScopes('org:passes:read', [...allowed, 'org:passes:read'])).to.throw(InvalidScope);
    });
  });

  describe('narrowedScopes (refresh)', () => {
    const granted = ['openid', 'profile', 'offline_access'];
    it('keeps the grant when absent, narrows to a subset, never widens', () => {
      expect(narrowedScopes(undefined, granted)).to.deep.equal(granted);
      expect(narrowedScopes('', granted)).to.deep.equal(granted);
      expect(narrowedScopes('profile openid', granted)).to.deep.equal(['openid', 'profile']);
      expect(() => narrowedScopes('openid email', granted)).to.throw(InvalidScope);
      expect(() => narrowedScopes(' openid', granted)).to.throw(InvalidScope);
    });
  });

  it('formats and compares sets', () => {
    expect(formatScope(['email', 'openid', 'email'])).to.equal('openid email');
    expect(isSubset(['openid'], ['openid', 'email'])).to.equal(true);
    expect(isSubset(['openid', 'x'], ['openid'])).to.equal(false);
  });
});
