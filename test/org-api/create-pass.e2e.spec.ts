// POST /api/v1/org/passes end to end: the 201 answer, attribution, read-your-writes and every
// error row of the spec that applies (400, 402, 404, 409, 413, 415), with nothing written on failure.
import { expect } from 'chai';
import { startStack, passBody, type Stack, type Tenant } from '../support/stack.js';
import { businessErrorSchema, orgPassSchema, passCreateResponseSchema, quotaErrorSchema } from '../../shared/http/api-schemas.js';
import { expectShape } from './response-shapes.js';

describe('organization API: create passes (POST /api/v1/org/passes)', function () {
  this.timeout(60_000);
  let stack: Stack;
  let tenant: Tenant;

  before(async () => {
    stack = await startStack({ label: 'org_create' });
    tenant = await stack.seed.tenant();
  });
  after(async () => {
    await stack?.stop();
  });

  const create = (body: unknown, apiKey = tenant.apiKey, headers: Record<string, string> = {}) =>
    stack.request('POST', '/api/v1/org/passes', { apiKey, json: body, headers });

  it('creates one pass and answers 201 with exactly the spec create response', async () => {
    const res = await create(passBody(tenant.facilityId));
    expect(res.status).to.equal(201);
    expectShape(res.body, passCreateResponseSchema);
    // No delivery runs in this stack: nothing is reported sent, and the batch still has its page.
    expect(res.body).to.include({ success: true, quantity: 1, qr_sent: false, sms_sent: false });
    expect(res.body.pass_link).to.match(new RegExp(`^${stack.baseUrl}/p/[A-Za-z0-9_-]{32}$`));
    expect(res.body.id).to.be.a('number');
    expect(res.body.public_id).to.match(/^gst_[0-9a-f]{32}$/);
    expect(res.body.qr_values).to.deep.equal([res.body.qr_value]);
    expect(res.body.message).to.be.a('string').and.not.empty;
    expect(res.headers.get('cache-control')).to.equal('no-store');
    expect(res.headers.get('content-type')).to.match(/^application\/json/);
  });

  it('creates a batch: distinct QR values in creation order, the first pass identified', async () => {
    const res = await create(passBody(tenant.facilityId, { quantity: 3 }));
    expect(res.status).to.equal(201);
    expect(res.body.quantity).to.equal(3);
    expect(res.body.qr_values).to.have.length(3);
    expect(new Set(res.body.qr_values).size).to.equal(3);
    expect(res.body.qr_value).to.equal(res.body.qr_values[0]);
    const rows = await stack.db('pass_list').where({ batch_id: (await stack.db('pass_list').where({ public_id: res.body.public_id }).first()).batch_id }).orderBy('pass_id');
    expect(rows).to.have.length(3);
    expect(Number(rows[0].pass_id)).to.equal(res.body.id);
    expect(rows[0].public_id).to.equal(res.body.public_id);
  });

  it('is listed at once (read-your-writes), attributed to the admin who created the key, with the facility name', async () => {
    const created = await create(passBody(tenant.facilityId, { first_name: 'Immediate', phone: '+49 151 234-5678', email: null }));
    expect(created.status).to.equal(201);
    const list = await stack.request('GET', '/api/v1/org/passes?limit=1', { apiKey: tenant.apiKey });
    expect(list.status).to.equal(200);
    const [item] = list.body.items;
    expectShape(item, orgPassSchema, 'pass');
    expect(item).to.include({
      public_id: created.body.public_id,
      first_name: 'Immediate',
      phone: '+491512345678',
      email: null,
      status: 'expected',
      created_by: tenant.userId,
      facility_id: tenant.facilityId,
      facility_name: 'Main entrance',
    });
  });

  it('records the API key as actor and the request id as correlation id of the events', async () => {
    const res = await create(passBody(tenant.facilityId), tenant.apiKey, { 'X-Request-Id': 'corr-create-1' });
    expect(res.status).to.equal(201);
    expect(res.headers.get('x-request-id')).to.equal('corr-create-1');
    const events = (await stack.store.readAll()).filter((e) => e.type === 'PassCreated' && e.metadata.correlationId === 'corr-create-1');
    expect(events).to.have.length(1);
    expect(events[0]!.metadata.actor).to.deep.equal({ kind: 'apiKey', id: tenant.keyId, userId: tenant.userId });
    expect(JSON.stringify(events[0]!.data)).not.to.include(res.body.qr_value);
  });

  it('answers the same request again (the same X-Request-Id, as the gateway resends it) with the batch it made, once', async () => {
    const body = passBody(tenant.facilityId, { quantity: 2, first_name: 'Twice' });
    const headers = { 'X-Request-Id': 'corr-create-again' };
    const [first, again] = await Promise.all([create(body, tenant.apiKey, headers), create(body, tenant.apiKey, headers)]);
    expect([first.status, again.status]).to.deep.equal([201, 201]);
    expect(again.body).to.deep.equal(first.body);
    const rows = await stack.db('pass_list').where({ first_name: 'Twice' });
    expect(rows, 'passes listed').to.have.length(2);
    expect(new Set(rows.map((r) => r.batch_id)).size, 'batches').to.equal(1);
    expect(rows.map((r) => r.public_id)).to.include(first.body.public_id);
    const other = await create({ ...body, first_name: 'Someone else' }, tenant.apiKey, headers);
    expect(other.status).to.equal(409);
    expectShape(other.body, businessErrorSchema);
  });

  it('seeds arrival_time from the T form of arrival_date', async () => {
    const day = new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10);
    const res = await create(passBody(tenant.facilityId, { arrival_date: `${day}T09:30` }));
    expect(res.status).to.equal(201);
    const row = await stack.db('pass_list').where({ public_id: res.body.public_id }).first();
    expect(row).to.include({ arrival_date: day, arrival_time: '09:30' });
  });

  describe('400: every rule of the create body, and nothing is written', () => {
    const cases: Array<[string, (facilityId: number) => unknown, RegExp]> = [
      ['first_name missing', (f) => { const b = passBody(f); delete b.first_name; return b; }, /first_name is required/],
      ['first_name over 100 characters', (f) => passBody(f, { first_name: 'x'.repeat(101) }), /first_name must be at most 100/],
      ['first_name blank', (f) => passBody(f, { first_name: '   ' }), /first_name/],
      ['first_name not a string', (f) => passBody(f, { first_name: 42 }), /first_name must be a string/],
      ['last_name over 100 characters', (f) => passBody(f, { last_name: 'y'.repeat(101) }), /last_name must be at most 100/],
      ['neither email nor phone', (f) => { const b = passBody(f); delete b.email; return b; }, /one of email or phone is required/],
      ['email and phone both null', (f) => passBody(f, { email: null, phone: null }), /one of email or phone is required/],
      ['email malformed', (f) => passBody(f, { email: 'not-an-email' }), /email must be a valid email/],
      ['phone with 6 digits', (f) => passBody(f, { phone: '123456' }), /phone must have 7 to 15 digits/],
      ['phone with 16 digits', (f) => passBody(f, { phone: '1234567890123456' }), /phone must have 7 to 15 digits/],
      ['phone with letters', (f) => passBody(f, { phone: '555-CALL-NOW' }), /phone/],
      ['arrival_date missing', (f) => { const b = passBody(f); delete b.arrival_date; return b; }, /arrival_date is required/],
      ['arrival_date malformed', (f) => passBody(f, { arrival_date: '22/11/2030' }), /arrival_date must be YYYY-MM-DD/],
      ['arrival_date not a calendar date', () => passBody(tenant.facilityId, { arrival_date: '2030-02-30' }), /not a real calendar date/],
      ['arrival_time malformed', (f) => passBody(f, { arrival_time: '25:00' }), /arrival_time must be HH:MM/],
      ['access_until before arrival_date', (f) => passBody(f, { arrival_date: '2030-05-10', access_until: '2030-05-09' }), /access_until must not precede arrival_date/],
      ['access_until malformed', (f) => passBody(f, { access_until: 'next week' }), /access_until must be/],
      ['facility_id missing', (f) => { const b = passBody(f); delete b.facility_id; return b; }, /facility_id is required/],
      ['facility_id a string', (f) => passBody(f, { facility_id: String(f) }), /facility_id must be an integer/],
      ['facility_id zero', (f) => passBody(f, { facility_id: 0 }), /facility_id must be a positive integer/],
      ['quantity 0', (f) => passBody(f, { quantity: 0 }), /quantity must be an integer from 1 to 10/],
      ['quantity 11', (f) => passBody(f, { quantity: 11 }), /quantity must be an integer from 1 to 10/],
      ['quantity 1.5', (f) => passBody(f, { quantity: 1.5 }), /quantity must be an integer/],
      ['an unknown field', (f) => passBody(f, { favourite_colour: 'blue' }), /unknown field "favourite_colour"/],
      ['__proto__ smuggled in', (f) => JSON.parse(`{"__proto__":{"admin":true},${JSON.stringify(passBody(f)).slice(1)}`), /unknown field "__proto__"|not valid JSON/],
      ['a JSON array', () => [passBody(tenant.facilityId)], /must be a JSON object/],
      ['arrival already over', (f) => passBody(f, { arrival_date: '2001-01-01' }), /already have expired/],
      ['several problems at once', (f) => passBody(f, { first_name: '', quantity: 99, extra: 1 }), /first_name.*;.*/],
    ];

    for (const [name, body, message] of cases) {
      it(`refuses ${name}`, async () => {
        const before = await stack.store.headPosition();
        const res = await create(body(tenant.facilityId));
        expect(res.status, JSON.stringify(res.body)).to.equal(400);
        expectShape(res.body, businessErrorSchema, 'error');
        expect(res.body.code).to.equal('validation_failed');
        expect(res.body.error).to.match(message);
        expect(res.headers.get('cache-control')).to.equal('no-store');
        expect(await stack.store.headPosition()).to.deep.equal(before);
      });
    }

    it('lists every problem in details', async () => {
      const res = await create(passBody(tenant.facilityId, { first_name: 'x'.repeat(101), quantity: 0, colour: 'red' }));
      expect(res.status).to.equal(400);
      expect(res.body.details).to.have.length.of.at.least(3);
    });

    it('refuses malformed JSON, an empty body and a JSON scalar', async () => {
      for (const raw of ['{"first_name": "Ann",', '{first_name: "Ann"}', '', '"Ann"', 'null']) {
        const res = await stack.request('POST', '/api/v1/org/passes', { apiKey: tenant.apiKey, raw, headers: { 'Content-Type': 'application/json' } });
        expect(res.status, JSON.stringify(raw)).to.equal(400);
        expectShape(res.body, businessErrorSchema, 'error');
      }
    });
  });

  it('415 for a body that is not JSON', async () => {
    for (const [type, raw] of [
      ['application/x-www-form-urlencoded', 'first_name=Ann'],
      ['text/plain', JSON.stringify(passBody(tenant.facilityId))],
      ['application/xml', '<pass/>'],
    ] as const) {
      const res = await stack.request('POST', '/api/v1/org/passes', { apiKey: tenant.apiKey, raw, headers: { 'Content-Type': type } });
      expect(res.status, type).to.equal(415);
      expect(res.body).to.include({ success: false, code: 'unsupported_media_type' });
    }
  });

  it('413 for a body over 64 KiB, and nothing is written', async () => {
    const before = await stack.store.headPosition();
    const res = await create(passBody(tenant.facilityId, { notes: 'n'.repeat(65 * 1024) }));
    expect(res.status).to.equal(413);
    expectShape(res.body, businessErrorSchema, 'error');
    expect(res.body.code).to.equal('payload_too_large');
    expect(await stack.store.headPosition()).to.deep.equal(before);
  });

  it('402 with the exact quota body when the allowance cannot fit the batch (all or nothing)', async () => {
    const small = await stack.seed.tenant({ inviteAllowance: 3 });
    expect((await create(passBody(small.facilityId), small.apiKey)).status).to.equal(201);
    const before = await stack.store.headPosition();
    const refused = await create(passBody(small.facilityId, { quantity: 3 }), small.apiKey);
    expect(refused.status).to.equal(402);
    expectShape(refused.body, quotaErrorSchema, 'quota error');
    expect(refused.body).to.deep.equal({
      code: 'CAPACITY_EXCEEDED',
      message: refused.body.message,
      dimension: 'guest_invites',
      limit: 3,
      current: 1,
      requested: 3,
    });
    expect(refused.body.message).to.be.a('string').and.not.empty;
    expect(await stack.store.headPosition()).to.deep.equal(before);
    expect((await create(passBody(small.facilityId, { quantity: 2 }), small.apiKey)).status).to.equal(201);
    const full = await create(passBody(small.facilityId), small.apiKey);
    expect(full.status).to.equal(402);
    expect(full.body).to.include({ limit: 3, current: 3, requested: 1 });
  });

  it('404 for a facility that does not exist or belongs to another organization', async () => {
    const other = await stack.seed.tenant();
    for (const facilityId of [other.facilityId, 999_999]) {
      const res = await create(passBody(facilityId));
      expect(res.status, String(facilityId)).to.equal(404);
      expectShape(res.body, businessErrorSchema, 'error');
      expect(res.body.code).to.equal('not_found');
    }
  });

  it('409 for a suspended or a deactivated facility', async () => {
    const suspended = await stack.seed.facility(tenant.orgId, { name: 'Loading dock' });
    await stack.seed.suspendFacility(suspended);
    const deactivated = await stack.seed.facility(tenant.orgId, { name: 'Old wing' });
    await stack.seed.deactivateFacility(deactivated);
    for (const facilityId of [suspended, deactivated]) {
      const before = await stack.store.headPosition();
      const res = await create(passBody(facilityId));
      expect(res.status, String(facilityId)).to.equal(409);
      expectShape(res.body, businessErrorSchema, 'error');
      expect(res.body.code).to.equal('conflict');
      expect(await stack.store.headPosition()).to.deep.equal(before);
    }
  });
});
