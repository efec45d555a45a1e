// GET /api/v1/org/members and /api/v1/org/members/{public_id} over HTTP against the real stack,
// with both credential kinds: organization API keys (basic and contact tier) and user access
// tokens (members:read with the employee_view role). Every parameter and error row of the spec.
import { expect } from 'chai';
import { startStack, type ApiResponse, type Stack } from '../support/stack.js';
import { stopTestDatabases } from '../support/database.js';
import { validate } from '../../shared/http/schema-validation.js';
import { memberPageSchema, memberResponseSchema } from '../../shared/http/api-schemas.js';
import { BASIC_MEMBER_FIELDS, MEMBER_FIELDS } from '../../query-service/members/member-fields.js';
import { accessToken, bearer } from '../user-api/user-api-fixtures.js';
import { deactivateMember, eraseMember, newMemberId, seedMember } from './member-fixtures.js';

const SEEDED_ACTIVE = 33;
const INACTIVE = 2;

describe('organization member endpoints', function () {
  this.timeout(60_000);
  let stack: Stack;
  let orgId: number;
  const keys = { basic: '', contact: '', passesOnly: '' };
  const tokens = { viewer: '', noRole: '', noScope: '', otherOrg: '' };
  /** Every member of the organization, newest first: its users (who join the directory themselves), then the seeded ones. */
  const ids: string[] = [];
  let ACTIVE = SEEDED_ACTIVE;
  let ada = '';
  let grace = '';
  let erased = '';
  let foreign = '';
  const inactive: string[] = [];

  const get = (path: string, credential: string): Promise<ApiResponse> => stack.request('GET', path, { headers: bearer(credential) });
  const list = (query: string, credential: string) => get(`/api/v1/org/members${query}`, credential);

  before(async () => {
    stack = await startStack({ label: 'member_endpoints' });
    orgId = await stack.seed.organization();
    const otherOrg = await stack.seed.organization();
    const admin = await stack.seed.admin(orgId);
    keys.basic = (await stack.seed.apiKey(orgId, admin, { scopes: ['org:members:read'] })).apiKey;
    keys.contact = (await stack.seed.apiKey(orgId, admin, { scopes: ['org:members:read', 'org:members:contact:read'] })).apiKey;
    keys.passesOnly = (await stack.seed.apiKey(orgId, admin, { scopes: ['org:passes:read'] })).apiKey;
    const { clientId } = await stack.seed.client(orgId);
    const { clientId: otherClient } = await stack.seed.client(otherOrg);
    const viewer = await stack.seed.user(orgId, { roles: ['employee_view'] });
    const noRole = await stack.seed.user(orgId, { roles: ['self_invite'] });
    const otherViewer = await stack.seed.user(otherOrg, { roles: ['employee_view'] });
    tokens.viewer = await accessToken(stack, { userId: viewer.userId, clientId, scopes: ['openid', 'members:read'] });
    tokens.noRole = await accessToken(stack, { userId: noRole.userId, clientId, scopes: ['members:read'] });
    tokens.noScope = await accessToken(stack, { userId: viewer.userId, clientId, scopes: ['openid', 'passes:read'] });
    tokens.otherOrg = await accessToken(stack, { userId: otherViewer.userId, clientId: otherClient, scopes: ['members:read'] });

    // Seeded long ago, so that they list after the members the users above joined as (now).
    const base = Date.parse('2001-01-01T00:00:00.000Z');
    const seeded: string[] = [];
    for (let i = 0; i < SEEDED_ACTIVE + INACTIVE; i++) {
      const person =
        i === 5
          ? { firstName: 'Ada', lastName: 'Lovelace', email: 'Ada.Lovelace@Example.org', phone: '+44 20 7946 0012' }
          : i === 10
            ? { firstName: 'Grace', lastName: 'Hopper', email: 'grace@example.com', phone: null }
            : i === 20
              ? { firstName: 'Erin', lastName: 'Erased', email: 'erin@example.net', phone: '+1 555 0100 999' }
              : { firstName: `Person${i}`, lastName: i % 2 ? 'Adamson' : 'Brown', email: `person${i}@example.com`, phone: null };
      seeded.push(
        await seedMember(
          stack,
          { orgId, ...person, jobTitle: `Title ${i}`, department: i % 3 ? 'Sales' : null, externalId: `HR-${i}`, userId: null, occurredAt: new Date(base + i * 60_000).toISOString() },
          { wait: i === SEEDED_ACTIVE + INACTIVE - 1 },
        ),
      );
    }
    const users = await stack
      .db('member_directory')
      .where({ org_id: orgId })
      .whereNotIn('member_id', seeded)
      .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'member_id', order: 'desc' }])
      .pluck('member_id');
    ACTIVE += users.length;
    ids.push(...users, ...[...seeded].reverse());
    ada = seeded[5]!;
    grace = seeded[10]!;
    erased = seeded[20]!;
    inactive.push(seeded[3]!, seeded[7]!);
    for (const id of inactive) await deactivateMember(stack, orgId, id);
    await eraseMember(stack, orgId, erased, false);
    foreign = await seedMember(stack, { orgId: otherOrg, firstName: 'Ada', lastName: 'Foreign', email: 'ada.lovelace@example.org' });
  });

  after(async () => {
    await stack?.stop();
    await stopTestDatabases();
  });

  const activeIds = () => ids.filter((id) => !inactive.includes(id));

  describe('credentials', () => {
    it('API key with org:members:read: the basic fields, newest first, the active members', async () => {
      const res = await list('', keys.basic);
      expect(res.status).to.equal(200);
      validate(memberPageSchema, res.body);
      expect(res.headers.get('cache-control')).to.equal('no-store');
      expect(res.body.items).to.have.length(30);
      expect(res.body.items.map((m: { id: string }) => m.id)).to.deep.equal(activeIds().slice(0, 30));
      for (const item of res.body.items) expect(Object.keys(item)).to.deep.equal([...BASIC_MEMBER_FIELDS]);
      expect(res.body).to.include({ total: ACTIVE, has_more: true });
      const adaItem = (await get(`/api/v1/org/members/${ada}`, keys.basic)).body.member;
      expect(adaItem).to.include({ name: 'Ada Lovelace', first_name: 'Ada', last_name: 'Lovelace', job_title: 'Title 5', department: 'Sales', status: 'active' });
      expect(adaItem.created_at).to.equal('2001-01-01T00:05:00.000Z');
    });

    it('API key with the contact scope: email and phone decrypted; an erased member reads null', async () => {
      const res = await list('?limit=100', keys.contact);
      expect(res.status).to.equal(200);
      validate(memberPageSchema, res.body);
      for (const item of res.body.items) expect(Object.keys(item)).to.deep.equal([...MEMBER_FIELDS]);
      const byId = new Map(res.body.items.map((m: { id: string }) => [m.id, m]));
      expect(byId.get(ada)).to.include({ email: 'Ada.Lovelace@Example.org', phone: '+44 20 7946 0012' });
      expect(byId.get(grace)).to.include({ email: 'grace@example.com', phone: null });
      expect(byId.get(erased)).to.include({ name: 'Erin Erased', email: null, phone: null });
    });

    it('user token with members:read and the employee_view role: every field, its own organization only', async () => {
      const res = await list('?limit=100', tokens.viewer);
      expect(res.status).to.equal(200);
      validate(memberPageSchema, res.body);
      expect(res.body.items.map((m: { id: string }) => m.id)).to.deep.equal(activeIds());
      expect(res.body.items.map((m: { id: string }) => m.id)).not.to.include(foreign);
      expect(res.body.items.find((m: { id: string }) => m.id === ada)).to.include({ email: 'Ada.Lovelace@Example.org' });
      const other = await list('?limit=100&search=foreign', tokens.otherOrg);
      expect(other.body.items.map((m: { id: string }) => m.id)).to.deep.equal([foreign]);
    });

    it('never returns credential material, internal ids, hashes, external_id or user_id', async () => {
      for (const credential of [keys.contact, tokens.viewer]) {
        const res = await list('?limit=100&status=all', credential);
        for (const item of res.body.items) {
          expect(Object.keys(item).every((k) => (MEMBER_FIELDS as readonly string[]).includes(k))).to.equal(true);
          expect(JSON.stringify(item)).not.to.match(/HR-|hash|keyId|ciphertext/);
        }
      }
    });

    it('a user without the employee_view role: 403 insufficient_scope', async () => {
      for (const path of ['/api/v1/org/members', `/api/v1/org/members/${ada}`]) {
        const res = await get(path, tokens.noRole);
        expect(res.status).to.equal(403);
        expect(res.body).to.deep.equal({ error: 'insufficient_scope' });
        expect(res.headers.get('www-authenticate')).to.match(/error="insufficient_scope", scope="members:read"/);
      }
    });

    it('a user token without members:read: 403 insufficient_scope', async () => {
      const res = await list('', tokens.noScope);
      expect(res.status).to.equal(403);
      expect(res.headers.get('www-authenticate')).to.match(/scope="members:read"/);
    });

    it('an API key without org:members:read: 403 naming it', async () => {
      for (const path of ['/api/v1/org/members', `/api/v1/org/members/${ada}`]) {
        const res = await get(path, keys.passesOnly);
        expect(res.status).to.equal(403);
        expect(res.headers.get('www-authenticate')).to.match(/error="insufficient_scope", scope="org:members:read"/);
      }
    });

    it('no credential, an unknown key, a forged token: 401 invalid_token', async () => {
      const none = await stack.request('GET', '/api/v1/org/members');
      expect(none.status).to.equal(401);
      expect(none.headers.get('www-authenticate')).to.match(/^Bearer .*error="invalid_token"/);
      const unknownKey = await list('', `svc_sk_${'A'.repeat(43)}`);
      expect(unknownKey.status).to.equal(401);
      expect(unknownKey.body).to.deep.equal({ error: 'invalid_token' });
      const [h, p] = tokens.viewer.split('.');
      const forged = await list('', `${h}.${p}.${'A'.repeat(342)}`);
      expect(forged.status).to.equal(401);
      const garbage = await list('', 'not-a-token');
      expect(garbage.status).to.equal(401);
    });

    it('an API key as X-API-Key works like the Bearer form', async () => {
      const res = await stack.request('GET', '/api/v1/org/members?limit=1', { headers: { 'X-API-Key': keys.basic } });
      expect(res.status).to.equal(200);
      expect(res.body.items).to.have.length(1);
    });
  });

  describe('pagination', () => {
    it('walks every active member with the cursor, then has_more false', async () => {
      const seen: string[] = [];
      let query = '?limit=7';
      for (let pages = 0; pages < 10; pages++) {
        const res = await list(query, keys.basic);
        expect(res.status).to.equal(200);
        seen.push(...res.body.items.map((m: { id: string }) => m.id));
        if (!res.body.has_more) {
          expect(res.body.next_cursor).to.equal(null);
          break;
        }
        query = `?limit=7&cursor=${encodeURIComponent(res.body.next_cursor)}`;
      }
      expect(seen).to.deep.equal(activeIds());
    });

    it('refuses a bad limit: 0, 101, not an integer', async () => {
      for (const limit of ['0', '101', 'ten', '1.5']) {
        const res = await list(`?limit=${limit}`, keys.basic);
        expect(res.status, limit).to.equal(400);
        expect(res.body.success).to.equal(false);
      }
    });

    it('refuses an altered cursor, and one replayed with another status, search, organization or tier', async () => {
      const first = await list('?limit=2', keys.basic);
      const cursor: string = first.body.next_cursor;
      const tampered = cursor.slice(0, -2) + (cursor.endsWith('AA') ? 'BB' : 'AA');
      expect((await list(`?limit=2&cursor=${encodeURIComponent(tampered)}`, keys.basic)).status).to.equal(400);
      expect((await list(`?limit=2&status=all&cursor=${encodeURIComponent(cursor)}`, keys.basic)).status).to.equal(400);
      expect((await list(`?limit=2&search=ada&cursor=${encodeURIComponent(cursor)}`, keys.basic)).status).to.equal(400);
      expect((await list(`?limit=2&cursor=${encodeURIComponent(cursor)}`, tokens.otherOrg)).status).to.equal(400);
      expect((await list(`?limit=2&cursor=${encodeURIComponent(cursor)}`, keys.contact)).status).to.equal(400);
      expect((await list(`?limit=2&cursor=${encodeURIComponent(cursor)}`, keys.basic)).status).to.equal(200);
    });

    it('refuses an unknown parameter and a repeated one', async () => {
      expect((await list('?sort=name', keys.basic)).status).to.equal(400);
      expect((await list('?status=active&status=all', keys.basic)).status).to.equal(400);
    });
  });

  describe('status', () => {
    it('inactive lists only the inactive members, all lists everyone, each with its total', async () => {
      const inactiveRes = await list('?status=inactive', keys.basic);
      expect(inactiveRes.body.items.map((m: { id: string }) => m.id)).to.deep.equal(ids.filter((id) => inactive.includes(id)));
      expect(inactiveRes.body.items.every((m: { status: string }) => m.status === 'inactive')).to.equal(true);
      expect(inactiveRes.body.total).to.equal(INACTIVE);
      const all = await list('?status=all&limit=100', tokens.viewer);
      expect(all.body.items.map((m: { id: string }) => m.id)).to.deep.equal(ids);
      expect(all.body.total).to.equal(ACTIVE + INACTIVE);
    });

    it('refuses any other status with 400', async () => {
      for (const status of ['deleted', 'ACTIVE', '']) {
        const res = await list(`?status=${status}`, keys.basic);
        expect(res.status, status).to.equal(400);
      }
    });
  });

  describe('search', () => {
    it('matches a case-insensitive substring of the name; total is null', async () => {
      const res = await list('?search=LOVEL', keys.basic);
      expect(res.status).to.equal(200);
      expect(res.body.items.map((m: { id: string }) => m.id)).to.deep.equal([ada]);
      expect(res.body.total).to.equal(null);
      // Odd seeded members are Adamsons but Ada (5); 3 and 7 are inactive.
      const adams = await list('?search=adam&limit=100', keys.basic);
      expect(adams.body.items).to.have.length(14);
      expect(adams.body.items.every((m: { last_name: string }) => m.last_name === 'Adamson')).to.equal(true);
    });

    it('treats LIKE wildcards in the term literally', async () => {
      expect((await list('?search=%25', keys.basic)).body.items).to.deep.equal([]);
      expect((await list('?search=_', keys.basic)).body.items).to.deep.equal([]);
    });

    it('matches a whole email or phone with the contact tier (API key or user token), not a part of one', async () => {
      for (const credential of [keys.contact, tokens.viewer]) {
        const byEmail = await list(`?search=${encodeURIComponent(' ada.lovelace@EXAMPLE.org ')}`, credential);
        expect(byEmail.body.items.map((m: { id: string }) => m.id)).to.deep.equal([ada]);
        const byPhone = await list(`?search=${encodeURIComponent('+442079460012')}`, credential);
        expect(byPhone.body.items.map((m: { id: string }) => m.id)).to.deep.equal([ada]);
        expect((await list('?search=lovelace%40example', credential)).body.items).to.deep.equal([]);
      }
    });

    it('without the contact scope an email search matches nothing', async () => {
      const res = await list(`?search=${encodeURIComponent('ada.lovelace@example.org')}`, keys.basic);
      expect(res.status).to.equal(200);
      expect(res.body.items).to.deep.equal([]);
      expect(res.body.total).to.equal(null);
      expect((await list(`?search=${encodeURIComponent('nobody@example.org')}`, keys.basic)).body).to.deep.equal(res.body);
    });

    it('finds an erased contact no more', async () => {
      expect((await list('?search=erin%40example.net', keys.contact)).body.items).to.deep.equal([]);
      expect((await list('?search=erased', keys.contact)).body.items.map((m: { id: string }) => m.id)).to.deep.equal([erased]);
    });

    it('refuses a search longer than 100 characters', async () => {
      expect((await list(`?search=${'a'.repeat(101)}`, keys.basic)).status).to.equal(400);
    });
  });

  describe('fields', () => {
    it('answers with the selected fields only, in the Member order', async () => {
      const res = await list('?fields=status,%20name,id&limit=3', keys.basic);
      expect(res.status).to.equal(200);
      for (const item of res.body.items) expect(Object.keys(item)).to.deep.equal(['id', 'name', 'status']);
      const contact = await list('?fields=email,id&search=lovelace', tokens.viewer);
      expect(contact.body.items).to.deep.equal([{ id: ada, email: 'Ada.Lovelace@Example.org' }]);
    });

    it('an unknown field is 400 listing the allowed fields', async () => {
      for (const fields of ['id,photo_url', 'external_id', 'user_id', 'id,,name']) {
        const res = await list(`?fields=${fields}`, keys.contact);
        expect(res.status, fields).to.equal(400);
        expect(res.body.error).to.include(MEMBER_FIELDS.join(', '));
      }
    });

    it('a contact field without the contact scope is 403 naming org:members:contact:read', async () => {
      for (const path of ['/api/v1/org/members?fields=id,email', `/api/v1/org/members/${ada}?fields=phone`]) {
        const res = await get(path, keys.basic);
        expect(res.status).to.equal(403);
        expect(res.body).to.deep.equal({ error: 'insufficient_scope' });
        expect(res.headers.get('www-authenticate')).to.equal('Bearer realm="guestpass", error="insufficient_scope", scope="org:members:contact:read"');
      }
    });
  });

  describe('get by id', () => {
    it('returns a member with the tier\'s fields', async () => {
      const basic = await get(`/api/v1/org/members/${ada}`, keys.basic);
      expect(basic.status).to.equal(200);
      validate(memberResponseSchema, basic.body);
      expect(Object.keys(basic.body.member)).to.deep.equal([...BASIC_MEMBER_FIELDS]);
      const contact = await get(`/api/v1/org/members/${ada}`, keys.contact);
      expect(contact.body.member).to.include({ id: ada, name: 'Ada Lovelace', email: 'Ada.Lovelace@Example.org', phone: '+44 20 7946 0012' });
      const user = await get(`/api/v1/org/members/${ada}?fields=name,phone`, tokens.viewer);
      expect(user.body).to.deep.equal({ success: true, member: { name: 'Ada Lovelace', phone: '+44 20 7946 0012' } });
    });

    it('returns inactive members and erased contact as null', async () => {
      const res = await get(`/api/v1/org/members/${inactive[0]}`, keys.contact);
      expect(res.status).to.equal(200);
      expect(res.body.member.status).to.equal('inactive');
      expect((await get(`/api/v1/org/members/${erased}`, keys.contact)).body.member).to.include({ email: null, phone: null });
    });

    it('is 404 for another organization\'s member, an unknown id and a malformed id', async () => {
      for (const id of [foreign, newMemberId(), 'emp_123', 'gst_00000001', ada.toUpperCase()]) {
        for (const credential of [keys.contact, tokens.viewer]) {
          const res = await get(`/api/v1/org/members/${encodeURIComponent(id)}`, credential);
          expect(res.status, id).to.equal(404);
          expect(res.body.success).to.equal(false);
        }
      }
    });

    it('refuses an unknown parameter and an unknown field', async () => {
      expect((await get(`/api/v1/org/members/${ada}?limit=1`, keys.basic)).status).to.equal(400);
      expect((await get(`/api/v1/org/members/${ada}?fields=ssn`, keys.basic)).status).to.equal(400);
    });
  });

  describe('discovery and OpenAPI', () => {
    it('publishes both endpoints, the Member schema and members:read', async () => {
      const doc = (await stack.request('GET', '/api/v1/openapi.json')).body;
      expect(doc.paths).to.have.property('/api/v1/org/members');
      expect(doc.paths).to.have.property('/api/v1/org/members/{public_id}');
      expect(doc.components.schemas.Member.properties).to.have.keys([...MEMBER_FIELDS]);
      const params = doc.paths['/api/v1/org/members'].get.parameters.map((p: { name: string }) => p.name);
      expect(params).to.have.members(['limit', 'cursor', 'search', 'fields', 'status']);
      const discovery = (await stack.request('GET', '/.well-known/openid-configuration')).body;
      expect(discovery.scopes_supported).to.include('members:read');
    });
  });
});
