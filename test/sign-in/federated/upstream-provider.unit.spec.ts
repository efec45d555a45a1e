import { expect } from 'chai';
import { UpstreamProvider, isLoopbackHttp } from '../../../command-service/sign-in/federated/upstream-provider.js';

const federation = (issuer: string) => ({ issuer, clientId: 'svc_00000000000000000000000000000000', clientSecret: 'secret', displayName: 'Upstream' });

describe('upstream provider', () => {
  it('allows plain http only for a loopback issuer', () => {
    expect(isLoopbackHttp('http://127.0.0.1:8080')).to.equal(true);
    expect(isLoopbackHttp('http://localhost:8080')).to.equal(true);
    expect(isLoopbackHttp('http://[::1]:8080')).to.equal(true);
    expect(isLoopbackHttp('http://idp.example.com')).to.equal(false);
    expect(isLoopbackHttp('https://127.0.0.1')).to.equal(false);
  });

  it('refuses an issuer that is not https (outside loopback), has a query, or ends with a slash', () => {
    expect(() => new UpstreamProvider(federation('http://idp.example.com'))).to.throw(TypeError);
    expect(() => new UpstreamProvider(federation('https://idp.example.com/?tenant=1'))).to.throw(TypeError);
    expect(() => new UpstreamProvider(federation('https://idp.example.com/'))).to.throw(TypeError);
    expect(() => new UpstreamProvider(federation('https://idp.example.com'))).not.to.throw();
  });
});
