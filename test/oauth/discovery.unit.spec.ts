import { expect } from 'chai';
import { checkIssuer, discoveryDocument } from '../../shared/oauth/discovery.js';

describe('discovery document', () => {
  const doc = discoveryDocument('https://id.example.test');

  it('names every endpoint under the issuer', () => {
    expect(doc).to.include({
      issuer: 'https://id.example.test',
      authorization_endpoint: 'https://id.example.test/api/oauth/authorize',
      token_endpoint: 'https://id.example.test/api/oauth/token',
      jwks_uri: 'https://id.example.test/.well-known/jwks.json',
      userinfo_endpoint: 'https://id.example.test/api/oauth/userinfo',
      end_session_endpoint: 'https://id.example.test/api/oauth/logout',
      introspection_endpoint: 'https://id.example.test/api/oauth/introspect',
      revocation_endpoint: 'https://id.example.test/api/oauth/revoke',
    });
  });

  it('advertises what the spec and the issue require', () => {
    expect(doc.authorization_response_iss_parameter_supported).to.equal(true);
    expect(doc.code_challenge_methods_supported).to.deep.equal(['S256']);
    expect(doc.response_types_supported).to.deep.equal(['code']);
    expect(doc.grant_types_supported).to.deep.equal(['authorization_code', 'refresh_token']);
    expect(doc.id_token_signing_alg_values_supported).to.deep.equal(['RS256']);
    expect(doc.token_endpoint_auth_methods_supported).to.deep.equal(['client_secret_basic', 'client_secret_post', 'none']);
    expect(doc.introspection_endpoint_auth_methods_supported).to.not.include('none');
    expect(doc.scopes_supported).to.include.members(['openid', 'profile', 'email', 'offline_access', 'passes:read', 'passes:write', 'invites:read', 'members:read']);
    expect(doc.subject_types_supported).to.deep.equal(['public']);
    expect(doc.claims_supported).to.include.members(['sub', 'auth_time', 'amr', 'nonce', 'sid', 'email', 'name', 'picture']);
  });

  it('declares request objects unsupported (Discovery defaults request_uri support to true)', () => {
    expect(doc.request_parameter_supported).to.equal(false);
    expect(doc.request_uri_parameter_supported).to.equal(false);
  });

  it('is the same document for both well-known paths (one builder, deterministic)', () => {
    expect(discoveryDocument('https://id.example.test')).to.deep.equal(doc);
  });

  it('allows http only for a loopback issuer (development and tests)', () => {
    expect(discoveryDocument('http://127.0.0.1:8080').issuer).to.equal('http://127.0.0.1:8080');
  });

  for (const bad of ['id.example.test', 'http://id.example.test', 'https://id.example.test/', 'https://id.example.test?x=1', 'https://id.example.test#f', 'ftp://id.example.test']) {
    it(`refuses the issuer ${bad}`, () => {
      expect(() => checkIssuer(bad)).to.throw(TypeError);
    });
  }
});
