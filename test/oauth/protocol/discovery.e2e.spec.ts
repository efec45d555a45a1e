// Discovery end to end: both metadata paths and the key set (spec "Discovery (public, no auth)").
import { expect } from 'chai';
import { startStack, type Stack } from '../../support/stack.js';

describe('OAuth discovery (/.well-known/*)', function () {
  this.timeout(60_000);
  let stack: Stack;

  before(async () => {
    stack = await startStack({ label: 'oauth_discovery' });
  });
  after(async () => {
    await stack?.stop();
  });

  it('serves the same document at openid-configuration and oauth-authorization-server, with the required fields', async () => {
    const oidc = await stack.request('GET', '/.well-known/openid-configuration');
    const rfc8414 = await stack.request('GET', '/.well-known/oauth-authorization-server');
    expect(oidc.status).to.equal(200);
    expect(rfc8414.status).to.equal(200);
    expect(rfc8414.body).to.deep.equal(oidc.body);
    const base = stack.baseUrl;
    expect(oidc.body).to.include({
      issuer: base,
      authorization_endpoint: `${base}/api/oauth/authorize`,
      token_endpoint: `${base}/api/oauth/token`,
      jwks_uri: `${base}/.well-known/jwks.json`,
      introspection_endpoint: `${base}/api/oauth/introspect`,
      revocation_endpoint: `${base}/api/oauth/revoke`,
      authorization_response_iss_parameter_supported: true,
    });
    expect(oidc.body.code_challenge_methods_supported).to.deep.equal(['S256']);
    expect(oidc.body.grant_types_supported).to.have.members(['authorization_code', 'refresh_token']);
    expect(oidc.body.id_token_signing_alg_values_supported).to.deep.equal(['RS256']);
    expect(oidc.body.token_endpoint_auth_methods_supported).to.have.members(['client_secret_basic', 'client_secret_post', 'none']);
  });

  it('lets any origin read the documents and allows brief caching', async () => {
    for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server', '/.well-known/jwks.json']) {
      const res = await stack.request('GET', path, { headers: { Origin: 'https://spa.example.test' } });
      expect(res.headers.get('access-control-allow-origin'), path).to.equal('*');
      expect(res.headers.get('cache-control'), path).to.match(/^public, max-age=\d+$/);
    }
  });

  it('publishes the RS256 key set as {keys: [{kty, use, alg, kid, n, e}]}, including the key that signs tokens', async () => {
    const res = await stack.request('GET', '/.well-known/jwks.json');
    expect(res.status).to.equal(200);
    expect(res.body).to.have.keys(['keys']);
    expect(res.body.keys).to.be.an('array').that.is.not.empty;
    for (const key of res.body.keys as Array<Record<string, unknown>>) {
      expect(key).to.have.keys(['kty', 'use', 'alg', 'kid', 'n', 'e']);
      expect(key).to.include({ kty: 'RSA', use: 'sig', alg: 'RS256' });
      for (const field of ['kid', 'n', 'e']) expect(key[field], field).to.be.a('string').that.is.not.empty;
    }
    const signing = await stack.oauth.signingKeys.current();
    expect((res.body.keys as Array<{ kid: string }>).map((k) => k.kid)).to.include(signing.kid);
  });
});
