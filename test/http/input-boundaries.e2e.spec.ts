// Where requests are read, beyond the organization API (test/org-api/bad-input.e2e.spec.ts): the
// user-delegated writes refuse unknown query parameters like the reads, text PostgreSQL cannot
// store (NUL, unpaired surrogates) is a 400 in the family of the endpoint that reads it, and
// routes match case-sensitively. Never a 500, and nothing written for a refused request.
import { expect } from 'chai';
import { startStack, passBody, type Stack } from '../support/stack.js';
import { businessErrorSchema } from '../../shared/http/api-schemas.js';
import { expectShape } from '../org-api/response-shapes.js';
import { expectBadRequest, expectNoStore, expectNothingWritten as nothingWritten } from '../support/api-answers.js';
import { bearer, signedInUser, userTenant, type SignedInUser } from '../user-api/user-api-fixtures.js';
import { Browser, csrfTokenOf } from '../sign-in/support/browser.js';

const UNSTORABLE = 'must not contain NUL characters or unpaired surrogates';

describe('input boundaries: user API, forms, routing', function () {
  this.timeout(60_000);
  let stack: Stack;
  let tenant: Awaited<ReturnType<typeof userTenant>>;
  let me: SignedInUser;

  before(async () => {
    stack = await startStack({ label: 'input_boundaries' });
    tenant = await userTenant(stack);
    me = await signedInUser(stack, tenant);
  });
  after(async () => {
    await stack?.stop();
  });

  const send = (method: string, path: string, json?: unknown) => stack.request(method, path, { headers: bearer(me.token), json });

  /** The user's passes as the list shows them (public id -> status). */
  async function listed(): Promise<Map<string, string>> {
    const res = await send('GET', '/api/v1/passes?limit=100');
    expect(res.status, res.text).to.equal(200);
    return new Map((res.body.items as Array<{ public_id: string; status: string }>).map((p) => [p.public_id, p.status]));
  }

  const expectNothingWritten = (refused: () => Promise<void>) => nothingWritten(stack, listed, refused);

  async function createdPass(): Promise<string> {
    const res = await send('POST', '/api/v1/passes', passBody(tenant.facilityId));
    expect(res.status, res.text).to.equal(201);
    return res.body.public_id as string;
  }

  it('refuses unknown query parameters on POST and DELETE /api/v1/passes with 400, as the reads do, and writes nothing', async () => {
    const existing = await createdPass();
    await expectNothingWritten(async () => {
      expectBadRequest(await send('POST', '/api/v1/passes?notify=1', passBody(tenant.facilityId)), "invalid request query: unknown parameter 'notify'", 'create');
      expectBadRequest(await send('DELETE', `/api/v1/passes/${existing}?force=true`), "invalid request query: unknown parameter 'force'", 'revoke');
    });
    expect((await listed()).get(existing)).to.equal('expected');
  });

  it('refuses NUL characters and unpaired surrogates in the create body and in queries with 400, and writes nothing', async () => {
    const existing = await createdPass();
    await expectNothingWritten(async () => {
      expectBadRequest(await send('POST', '/api/v1/passes', passBody(tenant.facilityId, { first_name: 'Nul\u0000Byte' })), `first_name ${UNSTORABLE}`, 'NUL');
      expectBadRequest(await send('POST', '/api/v1/passes', passBody(tenant.facilityId, { first_name: '\ud800' })), `first_name ${UNSTORABLE}`, 'lone surrogate');
      expectBadRequest(await send('GET', '/api/v1/passes?search=%00'), `query parameter 'search' ${UNSTORABLE}`, 'list');
      expectBadRequest(await send('GET', `/api/v1/passes/${existing}?x=%00`), `query parameter 'x' ${UNSTORABLE}`, 'get');
      expectBadRequest(await send('GET', '/api/v1/invites?%00=1'), `query parameter names ${UNSTORABLE}`, 'invites');
      expectBadRequest(await send('DELETE', `/api/v1/passes/${existing}?x=%00`), `query parameter 'x' ${UNSTORABLE}`, 'revoke');
    });
  });

  it('routes case-sensitively: /API/v1/passes, /api/v1/PASSES and /API/oauth/userinfo are 404, and nothing is written', async () => {
    const existing = await createdPass();
    await expectNothingWritten(async () => {
      for (const [method, path] of [
        ['POST', '/API/v1/passes'],
        ['GET', '/api/v1/PASSES'],
        ['GET', `/api/v1/Passes/${existing}`],
        ['DELETE', `/api/v1/PASSES/${existing}`],
        ['GET', '/api/v1/Invites'],
        ['GET', '/API/oauth/userinfo'],
        ['POST', '/api/oauth/TOKEN'],
        ['GET', '/.well-known/JWKS.json'],
      ] as const) {
        const res = await send(method, path, method === 'POST' ? passBody(tenant.facilityId) : undefined);
        expect(res.status, `${method} ${path}: ${res.text}`).to.equal(404);
        expectShape(res.body, businessErrorSchema, `${method} ${path}`);
        expect(res.body, `${method} ${path}`).to.include({ success: false, code: 'not_found' });
      }
    });
  });

  it('answers a NUL character in a sign-in form with a 400 business error, not a 500', async () => {
    const browser = new Browser(stack.baseUrl);
    const page = await browser.get('/signin');
    expect(page.status).to.equal(200);
    const res = await browser.post('/signin', { csrf: csrfTokenOf(page.text), email: `a\u0000${me.email}`, password: 'x' });
    expect(res.status, res.text).to.equal(400);
    expect(JSON.parse(res.text)).to.deep.equal({ success: false, error: `email ${UNSTORABLE}`, code: 'validation_failed' });
  });

  it('answers a NUL character in a passkey ceremony\'s JSON body with 400, not a 500', async () => {
    const browser = new Browser(stack.baseUrl);
    const csrf = csrfTokenOf((await browser.get('/signin')).text);
    const res = await browser.request('POST', '/signin/passkey/verify', {
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ csrf, response: { id: 'a\u0000' } }),
    });
    expect(res.status, res.text).to.equal(400);
    expect(JSON.parse(res.text)).to.deep.equal({ success: false, error: `response.id ${UNSTORABLE}`, code: 'validation_failed' });
  });

  it('answers a NUL character in a protocol endpoint form with RFC 6749 invalid_request', async () => {
    for (const [path, form] of [
      ['/api/oauth/token', { grant_type: 'refresh_token', client_id: tenant.clientId, refresh_token: 'r\u0000' }],
      ['/api/oauth/revoke', { client_id: tenant.clientId, token: '\u0000' }],
    ] as const) {
      const res = await stack.request('POST', path, { raw: new URLSearchParams(form).toString(), headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
      expect(res.status, `${path}: ${res.text}`).to.equal(400);
      expect(res.body, path).to.deep.equal({ error: 'invalid_request', error_description: `Parameters ${UNSTORABLE}.` });
      expectNoStore(res, path);
    }
  });
});
