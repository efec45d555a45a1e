// GET /api/v1/org/passes end to end: the page envelope, keyset pagination under concurrent
// inserts, search, tenant isolation and every bad parameter.
import { expect } from 'chai';
import { startStack, passBody, type Stack, type Tenant } from '../support/stack.js';
import { businessErrorSchema, orgPassSchema, pageSchema } from '../../shared/http/api-schemas.js';
import { expectShape } from './response-shapes.js';

interface Item {
  public_id: string;
  first_name: string;
  created_at: string;
  created_by: number;
}

describe('organization API: list passes (GET /api/v1/org/passes)', function () {
  this.timeout(120_000);
  let stack: Stack;
  let tenant: Tenant;
  /** Public ids of the tenant's passes, oldest first. */
  const created: string[] = [];

  const list = (query = '', apiKey = tenant.apiKey) => stack.request('GET', `/api/v1/org/passes${query}`, { apiKey });

  async function walk(query: string, apiKey = tenant.apiKey, between?: (page: number) => Promise<void>): Promise<Item[]> {
    const seen: Item[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 1000; page++) {
      const res = await list(`${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, apiKey);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expectShape(res.body, pageSchema(orgPassSchema), 'page');
      seen.push(...(res.body.items as Item[]));
      expect(res.body.has_more).to.equal(res.body.next_cursor !== null);
      if (!res.body.has_more) return seen;
      cursor = res.body.next_cursor as string;
      await between?.(page);
    }
    throw new Error('pagination does not end');
  }

  before(async () => {
    stack = await startStack({ label: 'org_list' });
    tenant = await stack.seed.tenant();
    const guests = [
      { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@analytical.example' },
      { first_name: 'Alan', last_name: 'Turing', email: 'alan@bletchley.example', phone: '+44 20 7946 0958' },
      { first_name: 'Grace', last_name: 'HOPPER', email: null, phone: '555 010 9999' },
      { first_name: 'Edsger', last_name: 'Dijkstra', email: 'ewd_100%@tue.example' },
    ];
    for (let i = 0; i < 45; i++) {
      const guest = guests[i % guests.length]!;
      const res = await stack.request('POST', '/api/v1/org/passes', { apiKey: tenant.apiKey, json: passBody(tenant.facilityId, guest) });
      expect(res.status).to.equal(201);
      created.push(res.body.public_id as string);
    }
  });
  after(async () => {
    await stack?.stop();
  });

  it('answers the page envelope: newest first, default 30, total from the organization, no usage block', async () => {
    const res = await list();
    expect(res.status).to.equal(200);
    expectShape(res.body, pageSchema(orgPassSchema), 'page');
    expect(res.body.items).to.have.length(30);
    expect(res.body.total).to.equal(45);
    expect(res.body.has_more).to.equal(true);
    expect(res.body.next_cursor).to.be.a('string');
    expect(res.body).not.to.have.property('usage');
    expect(res.body.items.map((p: Item) => p.public_id)).to.deep.equal(created.slice(-30).reverse());
    expect(res.headers.get('cache-control')).to.equal('no-store');
  });

  it('walks every page exactly once, in order, for any page size', async () => {
    for (const limit of [1, 7, 45, 100]) {
      const items = await walk(`?limit=${limit}`);
      expect(items.map((p) => p.public_id), `limit ${limit}`).to.deep.equal([...created].reverse());
    }
  });

  it('loses and repeats nothing while passes are created between pages', async () => {
    const before = new Set((await walk('?limit=100')).map((p) => p.public_id));
    const added: string[] = [];
    const items = await walk('?limit=4', tenant.apiKey, async () => {
      const burst = await Promise.all(
        [0, 1].map(() => stack.request('POST', '/api/v1/org/passes', { apiKey: tenant.apiKey, json: passBody(tenant.facilityId) })),
      );
      for (const res of burst) {
        expect(res.status).to.equal(201);
        added.push(res.body.public_id as string);
      }
    });
    const ids = items.map((p) => p.public_id);
    expect(new Set(ids).size, 'no duplicates').to.equal(ids.length);
    for (const id of before) expect(ids, `pass ${id} missed`).to.include(id);
    expect(added.length).to.be.greaterThan(10);
    created.push(...added);
  });

  it('is an empty page for an organization without passes', async () => {
    const empty = await stack.seed.tenant();
    const res = await list('', empty.apiKey);
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ success: true, items: [], total: 0, next_cursor: null, has_more: false });
  });

  it('never shows another organization its passes', async () => {
    const other = await stack.seed.tenant();
    const res = await stack.request('POST', '/api/v1/org/passes', { apiKey: other.apiKey, json: passBody(other.facilityId, { first_name: 'Outsider' }) });
    expect(res.status).to.equal(201);
    const mine = await walk('?limit=100');
    expect(mine.map((p) => p.public_id)).not.to.include(res.body.public_id);
    expect(mine.every((p) => p.first_name !== 'Outsider')).to.equal(true);
    const theirs = await list('', other.apiKey);
    expect(theirs.body.items.map((p: Item) => p.public_id)).to.deep.equal([res.body.public_id]);
  });

  describe('search', () => {
    it('matches names, email and phone case-insensitively as substrings; total is null', async () => {
      const firstNames = async (term: string) => {
        const items = await walk(`?limit=100&search=${encodeURIComponent(term)}`);
        return new Set(items.map((p) => p.first_name));
      };
      expect(await firstNames('ADA')).to.deep.equal(new Set(['Ada']));
      expect(await firstNames('hopper')).to.deep.equal(new Set(['Grace']));
      expect(await firstNames('ring')).to.deep.equal(new Set(['Alan']));
      expect(await firstNames('BLETCHLEY.example')).to.deep.equal(new Set(['Alan']));
      expect(await firstNames('0109999')).to.deep.equal(new Set(['Grace']));
      expect(await firstNames('nobody-has-this')).to.deep.equal(new Set());
      const res = await list('?search=ada');
      expect(res.body.total).to.equal(null);
    });

    it('treats LIKE wildcards in the term literally', async () => {
      const percent = await walk(`?limit=100&search=${encodeURIComponent('100%')}`);
      expect(new Set(percent.map((p) => p.first_name))).to.deep.equal(new Set(['Edsger']));
      expect(await walk(`?limit=100&search=${encodeURIComponent('%')}`)).to.have.length(percent.length);
      expect(await walk(`?limit=100&search=${encodeURIComponent('_')}`)).to.have.length(percent.length);
    });

    it('pages through search results with cursors bound to the term', async () => {
      const all = await walk('?limit=100&search=a');
      const paged = await walk('?limit=3&search=a');
      expect(paged.map((p) => p.public_id)).to.deep.equal(all.map((p) => p.public_id));
      const first = await list('?limit=3&search=a');
      const cursor = encodeURIComponent(first.body.next_cursor as string);
      for (const query of [`?cursor=${cursor}`, `?cursor=${cursor}&search=b`]) {
        const res = await list(query);
        expect(res.status, query).to.equal(400);
        expect(res.body.error).to.match(/cursor/);
      }
      // The term is trimmed and lower-cased before the cursor is bound to it.
      expect((await list(`?cursor=${cursor}&search=A%20`)).status).to.equal(200);
    });

    it('treats a blank search as no search', async () => {
      const res = await list('?search=%20%20');
      expect(res.status).to.equal(200);
      expect(res.body.total).to.be.a('number');
    });

    it('refuses a search term over 100 characters', async () => {
      const res = await list(`?search=${'x'.repeat(101)}`);
      expect(res.status).to.equal(400);
      expectShape(res.body, businessErrorSchema, 'error');
    });
  });

  describe('400 for bad parameters', () => {
    const bad: Array<[string, RegExp]> = [
      ['?limit=0', /limit/],
      ['?limit=101', /limit/],
      ['?limit=-1', /limit/],
      ['?limit=abc', /limit/],
      ['?limit=1.5', /limit/],
      ['?limit=', /limit/],
      ['?limit=5&limit=6', /limit/],
      ['?cursor=', /cursor/],
      ['?cursor=not-a-cursor', /cursor/],
      ['?cursor=v1.eyJ4IjoxfQ.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', /cursor/],
      ['?page=2', /unknown parameter 'page'/],
      ['?api_key=svc_sk_x', /unknown parameter 'api_key'/],
    ];
    for (const [query, message] of bad) {
      it(`refuses ${query}`, async () => {
        const res = await list(query);
        expect(res.status, JSON.stringify(res.body)).to.equal(400);
        expectShape(res.body, businessErrorSchema, 'error');
        expect(res.body.code).to.equal('validation_failed');
        expect(res.body.error).to.match(message);
      });
    }

    it('refuses a tampered cursor, and a cursor of another organization', async () => {
      const first = await list('?limit=2');
      const cursor = first.body.next_cursor as string;
      const [version, payload, signature] = cursor.split('.') as [string, string, string];
      const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString()) as [string, number];
      const forged = Buffer.from(JSON.stringify([decoded[0], decoded[1] + 1000])).toString('base64url');
      for (const tampered of [`${version}.${forged}.${signature}`, `${cursor.slice(0, -2)}${cursor.endsWith('AA') ? 'BB' : 'AA'}`]) {
        const res = await list(`?cursor=${encodeURIComponent(tampered)}`);
        expect(res.status).to.equal(400);
        expect(res.body.error).to.match(/cursor/);
      }
      const other = await stack.seed.tenant();
      const foreign = await list(`?cursor=${encodeURIComponent(cursor)}`, other.apiKey);
      expect(foreign.status).to.equal(400);
    });

    it('accepts limit=1 and limit=100', async () => {
      expect((await list('?limit=1')).body.items).to.have.length(1);
      expect((await list('?limit=100')).status).to.equal(200);
    });
  });

  it('403 insufficient_scope for a key without org:passes:read', async () => {
    const writeOnly = await stack.seed.apiKey(tenant.orgId, tenant.userId, { scopes: ['org:passes:write'] });
    const res = await list('', writeOnly.apiKey);
    expect(res.status).to.equal(403);
    expect(res.body).to.deep.equal({ error: 'insufficient_scope' });
    expect(res.headers.get('www-authenticate')).to.match(/scope="org:passes:read"/);
  });
});
