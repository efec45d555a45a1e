// The user-delegated pass endpoints end to end: GET /api/v1/passes (own passes only, the page
// envelope, usage on the first page, pagination and search), GET /api/v1/passes/{id},
// POST /api/v1/passes (201, 400, 402, 404, 409) and DELETE /api/v1/passes/{id} (200, 404, 409).
import { expect } from 'chai';
import { startStack, passBody, type Stack } from '../support/stack.js';
import {
  businessErrorSchema,
  orgPassSchema,
  passCreateResponseSchema,
  passSchema,
  quotaErrorSchema,
  revokeResponseSchema,
} from '../../shared/http/api-schemas.js';
import { userPassPageSchema, userPassResponseSchema } from '../../query-service/user/user-api-schemas.js';
import { expectShape } from '../org-api/response-shapes.js';
import { expectNoStore } from '../support/api-answers.js';
import { bearer, seedPasses, signedInUser, userTenant, type SignedInUser } from './user-api-fixtures.js';
import { alteredCharacter } from '../support/altered.js';

interface Item {
  public_id: string;
  first_name: string;
  status: string;
}

describe('user API: passes', function () {
  this.timeout(120_000);
  let stack: Stack;
  let tenant: Awaited<ReturnType<typeof userTenant>>;
  let other: Awaited<ReturnType<typeof userTenant>>;
  /** The user under test, a colleague in the same organization, and a user of another organization. */
  let me: SignedInUser;
  let colleague: SignedInUser;
  let outsider: SignedInUser;
  /** My passes, oldest first. */
  const mine: string[] = [];
  let colleagues: string[];
  let outsiders: string[];

  const get = (path: string, user: SignedInUser = me) => stack.request('GET', path, { headers: bearer(user.token) });
  const create = (body: unknown, user: SignedInUser = me) => stack.request('POST', '/api/v1/passes', { headers: bearer(user.token), json: body });
  const revoke = (publicId: string, user: SignedInUser = me) => stack.request('DELETE', `/api/v1/passes/${publicId}`, { headers: bearer(user.token) });

  async function walk(query: string, user: SignedInUser = me): Promise<{ items: Item[]; pages: any[] }> {
    const items: Item[] = [];
    const pages: any[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 200; page++) {
      const res = await get(`/api/v1/passes${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, user);
      expect(res.status, res.text).to.equal(200);
      expectShape(res.body, userPassPageSchema, 'page');
      expectNoStore(res);
      pages.push(res.body);
      items.push(...(res.body.items as Item[]));
      expect(res.body.has_more).to.equal(res.body.next_cursor !== null);
      if (!res.body.has_more) return { items, pages };
      cursor = res.body.next_cursor as string;
    }
    throw new Error('pagination does not end');
  }

  before(async () => {
    stack = await startStack({ label: 'user_passes' });
    tenant = await userTenant(stack, { inviteAllowance: 1000 });
    other = await userTenant(stack);
    [me, colleague, outsider] = await Promise.all([signedInUser(stack, tenant), signedInUser(stack, tenant), signedInUser(stack, other)]);
    const guests = [
      { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@analytical.example' },
      { first_name: 'Alan', last_name: 'Turing', email: 'alan@bletchley.example', phone: '+44 20 7946 0958' },
      { first_name: 'Grace', last_name: 'HOPPER', email: null, phone: '555 010 9999' },
    ];
    for (let i = 0; i < 24; i++) mine.push(...(await seedPasses(stack, { ...tenant, userId: me.userId }, guests[i % guests.length])));
    colleagues = [
      ...(await seedPasses(stack, { ...tenant, userId: colleague.userId }, guests[0])),
      ...(await seedPasses(stack, { ...tenant, userId: colleague.userId }, { first_name: 'Colleague' })),
    ];
    outsiders = await seedPasses(stack, { ...other, userId: outsider.userId }, guests[0]);
  });
  after(async () => {
    await stack?.stop();
  });

  describe('GET /api/v1/passes', () => {
    it('answers the page envelope of the user\'s own passes only, newest first, without created_by, with usage', async () => {
      const res = await get('/api/v1/passes');
      expect(res.status).to.equal(200);
      expectShape(res.body, userPassPageSchema, 'page');
      expectNoStore(res);
      expect(res.body.items.map((p: Item) => p.public_id)).to.deep.equal([...mine].reverse());
      for (const item of res.body.items) {
        expectShape(item, passSchema, 'pass');
        expect(item).not.to.have.property('created_by');
      }
      expect(res.body).to.deep.include({ success: true, total: 24, next_cursor: null, has_more: false });
      expect(res.body.usage).to.deep.equal({ used: 24, limit: 1000, remaining: 976 });
      const first = res.body.items.at(-1);
      expect(first).to.include({ first_name: 'Ada', last_name: 'Lovelace', email: 'ada@analytical.example', status: 'expected', facility_id: tenant.facilityId, facility_name: 'Front door' });
    });

    it('walks every page exactly once for any page size, with usage on the first page only', async () => {
      for (const limit of [1, 5, 24, 100]) {
        const { items, pages } = await walk(`?limit=${limit}`);
        expect(items.map((p) => p.public_id), `limit ${limit}`).to.deep.equal([...mine].reverse());
        expect(pages[0].usage, `limit ${limit}: first page`).to.deep.equal({ used: 24, limit: 1000, remaining: 976 });
        for (const page of pages.slice(1)) expect(page, `limit ${limit}: later page`).not.to.have.property('usage');
        for (const page of pages) expect(page.total).to.equal(24);
      }
    });

    it('searches the user\'s own passes only, case-insensitively; total is null', async () => {
      const res = await get('/api/v1/passes?search=LOVELACE');
      expect(res.status).to.equal(200);
      expect(res.body.total).to.equal(null);
      expect(res.body.usage).to.deep.equal({ used: 24, limit: 1000, remaining: 976 });
      const expected = mine.filter((_, i) => i % 3 === 0).reverse();
      expect(res.body.items.map((p: Item) => p.public_id)).to.deep.equal(expected);
      // The colleague and the outsider have Ada Lovelace passes too: never shown here.
      for (const id of [...colleagues, ...outsiders]) expect(res.body.items.map((p: Item) => p.public_id)).not.to.include(id);

      const paged = await walk('?limit=3&search=ada%40analytical');
      expect(paged.items.map((p) => p.public_id)).to.deep.equal(expected);
      expect((await walk('?search=%2B4420')).items.map((p) => p.first_name)).to.deep.equal(Array(8).fill('Alan'));
      expect((await get('/api/v1/passes?search=zzz-nobody')).body).to.deep.include({ items: [], total: null, has_more: false });
    });

    it('refuses a cursor from another user, another search or altered, and bad parameters, with 400', async () => {
      const page = await get('/api/v1/passes?limit=2');
      const cursor = encodeURIComponent(page.body.next_cursor as string);
      const searched = await get('/api/v1/passes?limit=2&search=ada');
      const cases: Array<[string, SignedInUser]> = [
        [`?limit=2&cursor=${cursor}`, colleague],
        [`?limit=2&search=ada&cursor=${cursor}`, me],
        [`?limit=2&cursor=${encodeURIComponent(searched.body.next_cursor as string)}`, me],
        [`?limit=2&cursor=${alteredCharacter(cursor)}`, me],
        ['?limit=0', me],
        ['?limit=101', me],
        ['?limit=abc', me],
        ['?sort=asc', me],
        ['?limit=1&limit=2', me],
      ];
      for (const [query, user] of cases) {
        const res = await get(`/api/v1/passes${query}`, user);
        expect(res.status, query).to.equal(400);
        expectShape(res.body, businessErrorSchema, query);
        expectNoStore(res, query);
      }
    });

    it('takes the limit from the user\'s own allowance, else the organization\'s, and counts this user only', async () => {
      const capped = await signedInUser(stack, tenant, { inviteAllowance: 7 });
      await seedPasses(stack, { ...tenant, userId: capped.userId }, { quantity: 3 });
      expect((await get('/api/v1/passes', capped)).body.usage).to.deep.equal({ used: 3, limit: 7, remaining: 4 });
      expect((await get('/api/v1/passes', colleague)).body.usage).to.deep.equal({ used: 2, limit: 1000, remaining: 998 });
    });

    it('is an empty first page with full usage for a user without passes', async () => {
      const fresh = await signedInUser(stack, tenant);
      const res = await get('/api/v1/passes', fresh);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ success: true, items: [], total: 0, next_cursor: null, has_more: false, usage: { used: 0, limit: 1000, remaining: 1000 } });
    });
  });

  describe('GET /api/v1/passes/{public_id}', () => {
    it('answers {success, pass} for an own pass, the same pass the list shows', async () => {
      const res = await get(`/api/v1/passes/${mine[1]}`);
      expect(res.status).to.equal(200);
      expectShape(res.body, userPassResponseSchema);
      expectNoStore(res);
      const listed = (await get('/api/v1/passes?search=turing')).body.items.find((p: Item) => p.public_id === mine[1]);
      expect(res.body).to.deep.equal({ success: true, pass: listed });
    });

    it('is 404 for a colleague\'s pass, another organization\'s, an unknown and a malformed id', async () => {
      for (const id of [colleagues[0], outsiders[0], `gst_${'0'.repeat(32)}`, 'gst_nope', 'not-a-pass']) {
        const res = await get(`/api/v1/passes/${id}`);
        expect(res.status, String(id)).to.equal(404);
        expectShape(res.body, businessErrorSchema);
        expect(res.body.code).to.equal('not_found');
        expectNoStore(res);
      }
      expect((await get(`/api/v1/passes/${colleagues[0]}`, colleague)).status, 'the colleague sees it').to.equal(200);
    });
  });

  describe('POST /api/v1/passes', () => {
    it('creates passes attributed to the user, listed at once, counted in the usage', async () => {
      const author = await signedInUser(stack, tenant);
      const res = await stack.request('POST', '/api/v1/passes', {
        headers: { ...bearer(author.token), 'X-Request-Id': 'user-create-1' },
        json: passBody(tenant.facilityId, { first_name: 'Immediate', quantity: 2 }),
      });
      expect(res.status, res.text).to.equal(201);
      expectShape(res.body, passCreateResponseSchema);
      expectNoStore(res);
      expect(res.body).to.include({ success: true, quantity: 2, qr_sent: false, sms_sent: false });
      expect(res.body.pass_link).to.match(/\/p\/[A-Za-z0-9_-]{32}$/);
      expect(res.body.public_id).to.match(/^gst_[0-9a-f]{32}$/);
      expect(res.body.qr_values).to.have.length(2);
      expect(res.body.qr_value).to.equal(res.body.qr_values[0]);

      const list = await get('/api/v1/passes', author);
      expect(list.body.items).to.have.length(2);
      expect(list.body.items.map((p: Item) => p.first_name)).to.deep.equal(['Immediate', 'Immediate']);
      expect(list.body.items.map((p: Item) => p.public_id)).to.include(res.body.public_id);
      expect(list.body.usage).to.deep.equal({ used: 2, limit: 1000, remaining: 998 });

      // The organization sees it as the user's.
      const admin = await stack.seed.admin(tenant.orgId);
      const { apiKey } = await stack.seed.apiKey(tenant.orgId, admin, { scopes: ['org:passes:read'] });
      const org = await stack.request('GET', '/api/v1/org/passes?limit=1', { apiKey });
      expectShape(org.body.items[0], orgPassSchema);
      expect(org.body.items[0]).to.include({ created_by: author.userId, first_name: 'Immediate' });

      const events = (await stack.store.readAll()).filter((e) => e.type === 'PassCreated' && e.metadata.correlationId === 'user-create-1');
      expect(events).to.have.length(2);
      for (const event of events) expect(event.metadata.actor).to.deep.equal({ kind: 'user', id: author.userId });
    });

    it('400 for a body that fails validation, and nothing is written', async () => {
      const before = await stack.store.headPosition();
      for (const body of [{}, passBody(tenant.facilityId, { quantity: 11 }), passBody(tenant.facilityId, { created_by: 1 }), passBody(tenant.facilityId, { email: null })]) {
        const res = await create(body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expectShape(res.body, businessErrorSchema);
        expectNoStore(res);
      }
      expect(await stack.store.headPosition()).to.deep.equal(before);
    });

    it('402 with the quota body when the user\'s own allowance cannot fit the batch (all or nothing)', async () => {
      const capped = await signedInUser(stack, tenant, { inviteAllowance: 3 });
      expect((await create(passBody(tenant.facilityId, { quantity: 2 }), capped)).status).to.equal(201);
      const before = await stack.store.headPosition();
      const res = await create(passBody(tenant.facilityId, { quantity: 2 }), capped);
      expect(res.status).to.equal(402);
      expectShape(res.body, quotaErrorSchema);
      expect(res.body).to.include({ code: 'CAPACITY_EXCEEDED', dimension: 'guest_invites', limit: 3, current: 2, requested: 2 });
      expectNoStore(res);
      expect(await stack.store.headPosition(), 'all or nothing').to.deep.equal(before);
      expect((await create(passBody(tenant.facilityId), capped)).status, 'one still fits').to.equal(201);
      expect((await get('/api/v1/passes', capped)).body.usage).to.deep.equal({ used: 3, limit: 3, remaining: 0 });
      // Another user's allowance is their own.
      expect((await create(passBody(tenant.facilityId), colleague)).status).to.equal(201);
    });

    it('404 for a facility that does not exist or belongs to another organization; 409 when suspended or deactivated', async () => {
      for (const facilityId of [999_999, other.facilityId]) {
        const res = await create(passBody(facilityId));
        expect(res.status, `facility ${facilityId}`).to.equal(404);
        expectShape(res.body, businessErrorSchema);
      }
      const suspended = await stack.seed.facility(tenant.orgId);
      await stack.seed.suspendFacility(suspended);
      const closed = await stack.seed.facility(tenant.orgId);
      await stack.seed.deactivateFacility(closed);
      for (const facilityId of [suspended, closed]) {
        const res = await create(passBody(facilityId));
        expect(res.status, `facility ${facilityId}`).to.equal(409);
        expectShape(res.body, businessErrorSchema);
        expect(res.body.code).to.equal('conflict');
      }
    });
  });

  describe('DELETE /api/v1/passes/{public_id}', () => {
    it('revokes an own active pass: 200 with the revoke response, cancelled at once; then 409', async () => {
      const [target] = await seedPasses(stack, { ...tenant, userId: me.userId });
      const res = await revoke(target!);
      expect(res.status, res.text).to.equal(200);
      expectShape(res.body, revokeResponseSchema);
      expectNoStore(res);
      expect(res.body).to.deep.equal({ success: true, public_id: target, revoked: true });
      expect((await get(`/api/v1/passes/${target}`)).body.pass.status).to.equal('cancelled');

      const before = await stack.store.headPosition();
      const again = await revoke(target!);
      expect(again.status).to.equal(409);
      expectShape(again.body, businessErrorSchema);
      expect(again.body.code).to.equal('conflict');
      expect(await stack.store.headPosition()).to.deep.equal(before);
    });

    it('is 404 for a colleague\'s pass (which stays active), another organization\'s, an unknown and a malformed id', async () => {
      const before = await stack.store.headPosition();
      for (const id of [colleagues[0], outsiders[0], `gst_${'f'.repeat(32)}`, 'gst_x', 'nothing']) {
        const res = await revoke(id!);
        expect(res.status, String(id)).to.equal(404);
        expectShape(res.body, businessErrorSchema);
        expectNoStore(res);
      }
      expect(await stack.store.headPosition()).to.deep.equal(before);
      expect((await get(`/api/v1/passes/${colleagues[0]}`, colleague)).body.pass.status).to.equal('expected');
      expect((await get(`/api/v1/passes/${outsiders[0]}`, outsider)).body.pass.status).to.equal('expected');
    });
  });
});
