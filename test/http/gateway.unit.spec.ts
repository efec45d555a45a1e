import { expect } from 'chai';
import { routesToQueryService } from '../../shared/http/gateway.js';

describe('embedded gateway routing', () => {
  it('sends reads of the resource API and UserInfo to the query service', () => {
    expect(routesToQueryService('GET', '/api/v1/org/passes?limit=5')).to.equal(true);
    expect(routesToQueryService('HEAD', '/api/v1/org/facilities')).to.equal(true);
    expect(routesToQueryService('GET', '/api/v1/openapi.json')).to.equal(true);
    expect(routesToQueryService('GET', '/api/oauth/userinfo')).to.equal(true);
    expect(routesToQueryService('POST', '/api/oauth/userinfo')).to.equal(true);
  });

  it('sends writes, the OAuth protocol and discovery to the command service', () => {
    expect(routesToQueryService('POST', '/api/v1/org/passes')).to.equal(false);
    expect(routesToQueryService('DELETE', '/api/v1/org/passes/gst_x')).to.equal(false);
    expect(routesToQueryService('GET', '/api/oauth/authorize?x=1')).to.equal(false);
    expect(routesToQueryService('POST', '/api/oauth/token')).to.equal(false);
    expect(routesToQueryService('GET', '/.well-known/openid-configuration')).to.equal(false);
    expect(routesToQueryService('GET', '/api/v10/x')).to.equal(false);
  });
});
