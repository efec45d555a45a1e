// Bad input that belongs to no single endpoint: unknown endpoints and methods, oversized or odd
// headers. Every answer is a JSON error of the spec's shapes with Cache-Control: no-store, never
// a 500 or a stack trace.
import { expect } from 'chai';
import { startStack, passBody, type Stack, type Tenant } from '../support/stack.js';
import { businessErrorSchema } from '../../shared/http/api-schemas.js';
import { expectShape } from './response-shapes.js';

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
});
