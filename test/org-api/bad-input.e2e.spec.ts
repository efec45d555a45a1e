// Bad input that belongs to no single endpoint: unknown endpoints and methods, oversized or odd
// headers. Every answer is a JSON error of the spec's shapes with Cache-Control: no-store, never
// a 500 or a stack trace.
import { expect } from 'chai';
import { startStack, passBody, type Stack, type Tenant } from '../support/stack.js';
import { businessErrorSchema } from '../../shared/http/api-schemas.js';
import { expectBadRequest, expectNoStore, expectNothingWritten as nothingWritten } from '../support/api-answers.js';
import { expectShape } from './response-shapes.js';

const UNSTORABLE = 'must not contain NUL characters or unpaired surrogates';

describe('organization API: bad input', function () {
  this.timeout(60_000);
  let stack: Stack;
  let tenant: Tenant;

  before(async () => {
    stack = await startStack({ label: 'org_bad_input' });
    tenant = await stack.seed.tenant();
  });
  after(async () => {
    await stack?.stop();
  });

  /** The organization's passes as the list shows them (public id -> status). */
  async function listed(): Promise<Map<string, string>> {
    const res = await stack.request('GET', '/api/v1/org/passes?limit=100', { apiKey: tenant.apiKey });
    expect(res.status, res.text).to.equal(200);
    return new Map((res.body.items as Array<{ public_id: string; status: string }>).map((p) => [p.public_id, p.status]));
  }

  const expectNothingWritten = (refused: () => Promise<void>) => nothingWritten(stack, listed, refused);

  it('answers unknown endpoints and methods with a 404 business error', async () => {
    for (const [method, path] of [
      ['GET', '/api/v1/org/nothing'],
      ['GET', '/api/v1/org/passes/gst_00000000000000000000000000000000'],
      ['PUT', '/api/v1/org/passes'],
      ['PATCH', '/api/v1/org/passes/gst_00000000000000000000000000000000'],
      ['POST', '/api/v1/org/facilities'],
      ['DELETE', '/api/v1/org/facilities'],
      ['GET', '/api/v2/org/passes'],
      ['GET', '/nothing-here'],
    ] as const) {
      const res = await stack.request(method, path, { apiKey: tenant.apiKey });
      expect(res.status, `${method} ${path}`).to.equal(404);
      expectShape(res.body, businessErrorSchema, `${method} ${path}`);
      expect(res.headers.get('x-content-type-options')).to.equal('nosniff');
    }
  });

  it('never answers a 500 or a stack trace for odd credentials or ids', async () => {
    const odd: Array<[string, string, Record<string, string>]> = [
      ['GET', '/api/v1/org/passes', { Authorization: `Bearer svc_sk_${'a'.repeat(6000)}` }],
      ['GET', '/api/v1/org/passes', { Authorization: 'Bearer\tsvc_sk_tabbed' }],
      ['GET', '/api/v1/org/passes', { 'X-API-Key': ' ' }],
      ['GET', '/api/v1/org/passes?limit=%FF', { Authorization: `Bearer ${tenant.apiKey}` }],
      ['GET', '/api/v1/org/passes?search=%E0%A4%A', { Authorization: `Bearer ${tenant.apiKey}` }],
      ['GET', '/api/v1/org/passes?cursor[a]=1', { Authorization: `Bearer ${tenant.apiKey}` }],
      ['DELETE', '/api/v1/org/passes/%00', { Authorization: `Bearer ${tenant.apiKey}` }],
      ['DELETE', '/api/v1/org/passes/gst_%ZZ', { Authorization: `Bearer ${tenant.apiKey}` }],
    ];
    for (const [method, path, headers] of odd) {
      const res = await stack.request(method, path, { headers });
      const what = `${method} ${path} ${JSON.stringify(headers).slice(0, 60)}`;
      expect(res.status, what).to.be.within(200, 499);
      expect(res.headers.get('content-type'), what).to.match(/^application\/json/);
      expect(res.text).not.to.match(/at .*\.ts:\d+/);
      expect(res.headers.get('cache-control')).to.equal('no-store');
    }
  });

  it('reads JSON with a charset parameter, and a duplicate key cannot slip an invalid value past validation', async () => {
    const withCharset = await stack.request('POST', '/api/v1/org/passes', {
      apiKey: tenant.apiKey,
      raw: JSON.stringify(passBody(tenant.facilityId)),
      headers: { 'Content-Type': 'application/json; charset=utf-8' },
    });
    expect(withCharset.status).to.equal(201);
    const duplicate = await stack.request('POST', '/api/v1/org/passes', {
      apiKey: tenant.apiKey,
      raw: `{"first_name":"A","first_name":${JSON.stringify('x'.repeat(101))},"email":"a@example.com","arrival_date":"2031-01-01","facility_id":${tenant.facilityId}}`,
      headers: { 'Content-Type': 'application/json' },
    });
    expect(duplicate.status).to.equal(400);
  });

  it('refuses text PostgreSQL cannot store (NUL, unpaired surrogates) in a body or query with 400, and writes nothing', async () => {
    const { public_id: revocable } = (await stack.request('POST', '/api/v1/org/passes', { apiKey: tenant.apiKey, json: passBody(tenant.facilityId) })).body;
    await expectNothingWritten(async () => {
      for (const [overrides, error] of [
        [{ first_name: 'Nul\u0000Byte' }, `first_name ${UNSTORABLE}`],
        [{ first_name: '\ud800' }, `first_name ${UNSTORABLE}`],
        [{ last_name: 'x\udc00' }, `last_name ${UNSTORABLE}`],
        [{ notes: 'line\u0000' }, `notes ${UNSTORABLE}`],
      ] as const) {
        // JSON.stringify writes the NUL and the lone surrogates as \u escapes, as a client would.
        const res = await stack.request('POST', '/api/v1/org/passes', { apiKey: tenant.apiKey, json: passBody(tenant.facilityId, overrides) });
        expectBadRequest(res, error, JSON.stringify(overrides));
      }
      const key = await stack.request('POST', '/api/v1/org/passes', {
        apiKey: tenant.apiKey,
        raw: JSON.stringify(passBody(tenant.facilityId)).replace('{', '{"x\\u0000":1,'),
        headers: { 'Content-Type': 'application/json' },
      });
      expectBadRequest(key, `field names ${UNSTORABLE}`, 'NUL in a key');
      for (const [method, path, error] of [
        ['GET', '/api/v1/org/passes?search=%00', `query parameter 'search' ${UNSTORABLE}`],
        ['GET', '/api/v1/org/passes?search=a%00b&limit=5', `query parameter 'search' ${UNSTORABLE}`],
        ['GET', '/api/v1/org/facilities?%00=1', `query parameter names ${UNSTORABLE}`],
        ['POST', '/api/v1/org/passes?x=%00', `query parameter 'x' ${UNSTORABLE}`],
        ['DELETE', `/api/v1/org/passes/${revocable}?x=%00`, `query parameter 'x' ${UNSTORABLE}`],
      ] as const) {
        const res = await stack.request(method, path, { apiKey: tenant.apiKey, ...(method === 'POST' ? { json: passBody(tenant.facilityId) } : {}) });
        expectBadRequest(res, error, `${method} ${path}`);
      }
    });
  });

  it('routes case-sensitively: /API/v1/org/passes and /api/v1/ORG/facilities are 404, and nothing is written', async () => {
    const { public_id: existing } = (await stack.request('POST', '/api/v1/org/passes', { apiKey: tenant.apiKey, json: passBody(tenant.facilityId) })).body;
    await expectNothingWritten(async () => {
      for (const [method, path] of [
        ['POST', '/API/v1/org/passes'],
        ['POST', '/api/v1/Org/Passes'],
        ['GET', '/api/v1/ORG/facilities'],
        ['GET', '/api/v1/org/PASSES'],
        ['GET', '/API/v1/openapi.json'],
        ['DELETE', `/api/V1/org/passes/${existing}`],
      ] as const) {
        const res = await stack.request(method, path, { apiKey: tenant.apiKey, ...(method === 'POST' ? { json: passBody(tenant.facilityId) } : {}) });
        expect(res.status, `${method} ${path}: ${res.text}`).to.equal(404);
        expectShape(res.body, businessErrorSchema, `${method} ${path}`);
        expect(res.body, `${method} ${path}`).to.include({ success: false, code: 'not_found' });
      }
    });
  });

  it('answers 400 for a body its Content-Encoding cannot decode and 415 for an unknown encoding, and writes nothing', async () => {
    await expectNothingWritten(async () => {
      for (const encoding of ['gzip', 'deflate', 'br']) {
        const res = await stack.request('POST', '/api/v1/org/passes', {
          apiKey: tenant.apiKey,
          raw: JSON.stringify(passBody(tenant.facilityId)),
          headers: { 'Content-Type': 'application/json', 'Content-Encoding': encoding },
        });
        expectBadRequest(res, `request body could not be decoded (Content-Encoding: ${encoding})`, encoding);
      }
      const unknown = await stack.request('POST', '/api/v1/org/passes', {
        apiKey: tenant.apiKey,
        raw: JSON.stringify(passBody(tenant.facilityId)),
        headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'compress' },
      });
      expect(unknown.status, unknown.text).to.equal(415);
      expectShape(unknown.body, businessErrorSchema, 'unknown encoding');
      expect(unknown.body.code).to.equal('unsupported_media_type');
    });
  });

  it('parses a body of any +json media type as JSON', async () => {
    for (const type of ['application/vnd.example+json', 'application/problem+json; charset=utf-8']) {
      const res = await stack.request('POST', '/api/v1/org/passes', {
        apiKey: tenant.apiKey,
        raw: JSON.stringify(passBody(tenant.facilityId, { first_name: 'Plus' })),
        headers: { 'Content-Type': type },
      });
      expect(res.status, `${type}: ${res.text}`).to.equal(201);
      expect((await listed()).get(res.body.public_id), type).to.equal('expected');
    }
  });

  it('refuses unknown query parameters on create and revoke with 400, as the reads do, and writes nothing', async () => {
    const { public_id: existing } = (await stack.request('POST', '/api/v1/org/passes', { apiKey: tenant.apiKey, json: passBody(tenant.facilityId) })).body;
    await expectNothingWritten(async () => {
      const create = await stack.request('POST', '/api/v1/org/passes?notify=1', { apiKey: tenant.apiKey, json: passBody(tenant.facilityId) });
      expectBadRequest(create, "invalid request query: unknown parameter 'notify'", 'create');
      const revoke = await stack.request('DELETE', `/api/v1/org/passes/${existing}?force=true`, { apiKey: tenant.apiKey });
      expectBadRequest(revoke, "invalid request query: unknown parameter 'force'", 'revoke');
    });
    expect((await listed()).get(existing)).to.equal('expected');
  });
});
