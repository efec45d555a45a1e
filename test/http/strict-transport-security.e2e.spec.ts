// Strict-Transport-Security on every answer when the service is reached over https
// (PUBLIC_BASE_URL, the issuer), and never over plain http, where browsers ignore it anyway.
import { expect } from 'chai';
import { startStack, type Stack } from '../support/stack.js';
import { HSTS } from '../../shared/http/security-headers.js';

describe('Strict-Transport-Security', function () {
  this.timeout(60_000);
  let stack: Stack;
  before(async () => {
    stack = await startStack({ label: 'hsts' });
  });
  after(() => stack?.stop());

  const answers = (server: Pick<Stack, 'request'>) =>
    Promise.all([
      server.request('GET', '/.well-known/openid-configuration'),
      server.request('GET', '/api/v1/org/facilities'),
      server.request('GET', '/no/such/page'),
      server.request('GET', '/signin'),
    ]);

  it('is on every answer, success or error, of both apps when the public address is https', async () => {
    const server = await stack.serve({ issuer: 'https://guestpass.example' });
    try {
      for (const res of await answers(server)) expect(res.headers.get('strict-transport-security'), `${res.status}`).to.equal(HSTS);
    } finally {
      await server.close();
    }
  });

  it('is not sent when the public address is plain http', async () => {
    for (const res of await answers(stack)) expect(res.headers.get('strict-transport-security')).to.equal(null);
  });
});
