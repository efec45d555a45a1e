// The pass page against the running service (real PostgreSQL, the projections, both apps behind
// the gateway): a 3-pass batch made through the organization API, its page and headers, tokens
// that lead nowhere, an erased guest, a revoked pass, the calendar download, the guest's
// confirmation (CSRF, idempotency, read-your-writes, refusal) and the per-address rate limit.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { startStack, type Stack, type Tenant } from '../support/stack.js';
import { Browser, csrfTokenOf } from '../sign-in/support/browser.js';
import { createServiceApp } from '../../shared/http/service-app.js';
import { passPageRoutes } from '../../command-service/pass-page/pass-page-routes.js';
import { loadPassBatch } from '../../command-service/pass-page/load-pass-batch.js';
import { PASS_PAGE_CONTENT_SECURITY_POLICY } from '../../command-service/pass-page/pass-page-view.js';
import { createBatch, type CreatedBatch } from './support/pass-batch-fixtures.js';

const svgCount = (html: string) => (html.match(/<svg\b/g) ?? []).length;

function card(page: string, n: number): string {
  const m = new RegExp(`<li class="pass" aria-labelledby="pass-${n}">([\\s\\S]*?)</li>`).exec(page);
  if (!m) throw new Error(`no card for pass ${n}`);
  return m[1]!;
}

function expectPassPageHeaders(headers: Headers): void {
  expect(headers.get('content-security-policy')).to.equal(PASS_PAGE_CONTENT_SECURITY_POLICY);
  expect(headers.get('content-security-policy')).to.match(/^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/]+=*'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'$/);
  expect(headers.get('cache-control')).to.equal('no-store');
  expect(headers.get('referrer-policy')).to.equal('no-referrer');
  expect(headers.get('x-robots-tag')).to.include('noindex');
  expect(headers.get('x-content-type-options')).to.equal('nosniff');
}

describe('pass page (GET /p/{token}, calendar, confirmation) end to end', function () {
  this.timeout(60_000);
  let stack: Stack;
  let tenant: Tenant;
  let batch: CreatedBatch;

  before(async () => {
    stack = await startStack({ label: 'pass_page' });
    tenant = await stack.seed.tenant();
    batch = await createBatch(stack, tenant, { first_name: 'Grace', invited_by: 'Ada from Reception' });
  });
  after(async () => {
    await stack?.stop();
  });

  const get = (path: string) => new Browser(stack.baseUrl).get(path);
  const statusesOf = async (publicIds: readonly string[]) => {
    const list = await stack.request('GET', '/api/v1/org/passes?limit=100', { apiKey: tenant.apiKey });
    expect(list.status).to.equal(200);
    const byId = new Map<string, string>(list.body.items.map((p: { public_id: string; status: string }) => [p.public_id, p.status]));
    return publicIds.map((id) => byId.get(id));
  };

  it('serves the page of a 3-pass batch: 200, HTML, the strict headers, three QR codes, the guest and the facility', async () => {
    const res = await get(batch.path);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('text/html; charset=utf-8');
    expectPassPageHeaders(res.headers);
    expect(svgCount(res.text)).to.equal(3);
    expect(res.text).to.include('<h1>Guest pass for Grace</h1>');
    expect(res.text).to.include('<dd>Main entrance</dd>');
    expect(res.text).to.include('<dt>Invited by</dt><dd>Ada from Reception</dd>');
    for (const n of [1, 2, 3]) expect(card(res.text, n)).to.include(`Pass ${n} of 3`).and.include('role="img"');
    // The QR values are drawn, never written out as text.
    for (const value of batch.qrValues) expect(res.text).to.not.include(value);
  });

  it('answers 404 (an HTML page with the same headers) for an unknown token, a malformed one and a wrong path', async () => {
    const unknown = await get(`/p/${'A'.repeat(32)}`);
    expect(unknown.status).to.equal(404);
    expect(unknown.headers.get('content-type')).to.equal('text/html; charset=utf-8');
    expectPassPageHeaders(unknown.headers);
    expect(unknown.text).to.include('<h1>Pass not found</h1>');
    for (const bad of ['short', `${batch.token}x`, batch.token.slice(1), `${batch.token.slice(0, 31)}!`]) {
      const res = await get(`/p/${encodeURIComponent(bad)}`);
      expect(res.status, bad).to.equal(404);
      expect(res.text).to.include('Pass not found');
    }
    expect((await get(`/p/${'A'.repeat(32)}/calendar.ics`)).status).to.equal(404);
  });

  it('does not query the read models for a token that cannot be one', async () => {
    const refuse = () => {
      throw new Error('queried');
    };
    const deps = { db: refuse as never, store: { readStream: refuse } as never, subjectKeys: { getMany: refuse } as never };
    for (const bad of [undefined, '', 'short', 'A'.repeat(31), 'A'.repeat(33), `${'A'.repeat(31)}=`, `${'A'.repeat(31)}/`]) {
      expect(await loadPassBatch(deps, bad)).to.equal(null);
    }
  });

  it('offers the visit as an iCalendar download', async () => {
    const res = await get(`${batch.path}/calendar.ics`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('text/calendar; charset=utf-8');
    expect(res.headers.get('content-disposition')).to.equal('attachment; filename="guest-pass.ics"');
    expectPassPageHeaders(res.headers);
    expect(res.text.startsWith('BEGIN:VCALENDAR\r\n')).to.equal(true);
    expect(res.text.endsWith('END:VCALENDAR\r\n')).to.equal(true);
    const row = await stack.db('pass_batches').where({ batch_id: batch.batchId }).first('valid_from', 'valid_until');
    const utc = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z').replace(/[-:]/g, '');
    expect(res.text).to.include(`\r\nDTSTART:${utc(row.valid_from)}\r\n`).and.include(`\r\nDTEND:${utc(row.valid_until)}\r\n`);
    expect(res.text).to.include('\r\nSUMMARY:Guest visit: Main entrance\r\n').and.include('\r\nLOCATION:Main entrance\r\n');
    expect(res.text).to.match(/\r\nUID:[0-9a-f]{32}@guestpass\r\n/);
    expect(res.text).to.match(/\r\nDTSTAMP:\d{8}T\d{6}Z\r\n/);
  });

  it('shows a revoked pass as "Revoked" without its QR code, the others unchanged', async () => {
    const revoked = await createBatch(stack, tenant);
    const del = await stack.request('DELETE', `/api/v1/org/passes/${revoked.publicIds[1]}`, { apiKey: tenant.apiKey });
    expect(del.status, del.text).to.equal(200);
    const res = await get(revoked.path);
    expect(res.status).to.equal(200);
    expect(svgCount(res.text)).to.equal(2);
    expect(card(res.text, 2)).to.include('Revoked').and.not.include('<svg');
    expect(card(res.text, 1)).to.include('<svg');
    expect(card(res.text, 3)).to.include('<svg');
  });

  it('answers 404 once the guest is erased (the batch key destroyed)', async () => {
    const erased = await createBatch(stack, tenant);
    expect((await get(erased.path)).status).to.equal(200);
    await stack.deps.subjectKeys.destroy(erased.batchId);
    const res = await get(erased.path);
    expect(res.status).to.equal(404);
    expect(res.text).to.include('Pass not found').and.not.include('Grace');
    expect((await get(`${erased.path}/calendar.ics`)).status).to.equal(404);
  });

  describe('confirming the visit (POST /p/{token}/register)', () => {
    let confirmed: CreatedBatch;
    before(async () => {
      confirmed = await createBatch(stack, tenant);
      const del = await stack.request('DELETE', `/api/v1/org/passes/${confirmed.publicIds[2]}`, { apiKey: tenant.apiKey });
      expect(del.status).to.equal(200);
    });

    it('refuses a post without the CSRF token, or with another browser\'s (403, nothing recorded)', async () => {
      const browser = new Browser(stack.baseUrl);
      const page = await browser.get(confirmed.path);
      expect(page.status).to.equal(200);
      const noToken = await browser.post(`${confirmed.path}/register`, { name_on_id: 'Grace Hopper' });
      expect(noToken.status).to.equal(403);
      expect(noToken.headers.get('content-type')).to.equal('text/html; charset=utf-8');
      expectPassPageHeaders(noToken.headers);
      expect(noToken.text).to.include('Form expired');
      const stranger = new Browser(stack.baseUrl);
      await stranger.get(confirmed.path);
      const crossed = await stranger.post(`${confirmed.path}/register`, { csrf: csrfTokenOf(page.text), name_on_id: 'Grace Hopper' });
      expect(crossed.status).to.equal(403);
      expect(await statusesOf(confirmed.publicIds)).to.deep.equal(['expected', 'expected', 'cancelled']);
    });

    it('re-renders the form with a message (400) for a missing or too long name', async () => {
      const browser = new Browser(stack.baseUrl);
      const page = await browser.get(confirmed.path);
      const csrf = csrfTokenOf(page.text);
      const empty = await browser.post(`${confirmed.path}/register`, { csrf, name_on_id: '   ', vehicle_number: 'B-X 1' });
      expect(empty.status).to.equal(400);
      expect(empty.text).to.include('id="name_on_id-error"').and.include('aria-invalid="true"');
      expect(empty.text).to.include('value="B-X 1"');
      const long = await browser.post(`${confirmed.path}/register`, { csrf, name_on_id: 'x'.repeat(101) });
      expect(long.status).to.equal(400);
      const plate = await browser.post(`${confirmed.path}/register`, { csrf, name_on_id: 'Grace', vehicle_number: 'x'.repeat(33) });
      expect(plate.status).to.equal(400);
      expect(plate.text).to.include('id="vehicle_number-error"');
      expect(await statusesOf(confirmed.publicIds)).to.deep.equal(['expected', 'expected', 'cancelled']);
    });

    // The guest's browser and its form token, kept for the second submission (back button, double click).
    let guest: Browser;
    let csrf: string;

    it('confirms: 303 back to the page, which says "Visit confirmed"; the active passes are registered at once', async () => {
      guest = new Browser(stack.baseUrl);
      const page = await guest.get(confirmed.path);
      csrf = csrfTokenOf(page.text);
      const res = await guest.post(`${confirmed.path}/register`, { csrf, name_on_id: '  Grace Brewster Hopper ', vehicle_number: 'B-GH 1906' });
      expect(res.status).to.equal(303);
      expect(res.location).to.equal(confirmed.path);
      expect(res.headers.get('cache-control')).to.equal('no-store');
      expect(await statusesOf(confirmed.publicIds)).to.deep.equal(['registered', 'registered', 'cancelled']);
      const after = await guest.get(confirmed.path);
      expect(after.text).to.include('Visit confirmed').and.not.include('<form');
      expect(svgCount(after.text)).to.equal(2);
      const events = await stack.store.readAll();
      const registered = events.filter((e) => e.type === 'PassRegistered' && (e.data as { batchId: string }).batchId === confirmed.batchId);
      expect(registered).to.have.length(2);
      expect(registered[0]!.metadata.actor).to.deep.equal({ kind: 'system', name: 'pass-page' });
      // What the guest typed is sealed, never in the log as text.
      expect(JSON.stringify(registered.map((e) => e.data))).to.not.include('Hopper').and.not.include('B-GH');
    });

    it('is idempotent: the same form sent again records nothing and still redirects', async () => {
      const registeredEvents = async () => (await stack.store.readAll()).filter((e) => e.type === 'PassRegistered').length;
      const before = await registeredEvents();
      for (const name of ['Grace Brewster Hopper', '']) {
        const again = await guest.post(`${confirmed.path}/register`, { csrf, name_on_id: name });
        expect(again.status, `name "${name}"`).to.equal(303);
        expect(again.location).to.equal(confirmed.path);
      }
      expect(await registeredEvents()).to.equal(before);
      expect(await statusesOf(confirmed.publicIds)).to.deep.equal(['registered', 'registered', 'cancelled']);
    });

    it('refuses (409, a page saying why) a batch whose passes are all revoked', async () => {
      const gone = await createBatch(stack, tenant, { quantity: 1 });
      const browser = new Browser(stack.baseUrl);
      const page = await browser.get(gone.path);
      const csrf = csrfTokenOf(page.text);
      expect((await stack.request('DELETE', `/api/v1/org/passes/${gone.publicIds[0]}`, { apiKey: tenant.apiKey })).status).to.equal(200);
      const res = await browser.post(`${gone.path}/register`, { csrf, name_on_id: 'Grace Hopper' });
      expect(res.status).to.equal(409);
      expect(res.headers.get('content-type')).to.equal('text/html; charset=utf-8');
      expect(res.text).to.include('Visit cannot be confirmed').and.include(`href="${gone.path}"`);
      expect(await statusesOf(gone.publicIds)).to.deep.equal(['cancelled']);
    });
  });

  describe('rate limit per source address', () => {
    let server: http.Server;
    let baseUrl: string;
    before(async () => {
      // The service's app front and the pass page routes with a low limit of their own.
      const app = createServiceApp({ logger: stack.logger, trustProxy: true });
      const deps = { ...stack.deps, logger: stack.logger, config: { trustProxy: true }, oauth: stack.oauth };
      app.use(passPageRoutes(deps, { trustProxy: true, rateLimit: { points: 3, abuseThreshold: 100 } }).routes());
      server = http.createServer(app.callback());
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(async () => {
      server?.closeAllConnections();
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    });

    const from = (ip: string, path: string) => fetch(baseUrl + path, { headers: { 'X-Forwarded-For': ip } });

    it('answers 429 (an HTML page with Retry-After) past the limit, counting every route and unknown tokens alike', async () => {
      expect((await from('203.0.113.7', batch.path)).status).to.equal(200);
      expect((await from('203.0.113.7', `/p/${'B'.repeat(32)}`)).status).to.equal(404);
      expect((await from('203.0.113.7', `${batch.path}/calendar.ics`)).status).to.equal(200);
      const limited = await from('203.0.113.7', batch.path);
      expect(limited.status).to.equal(429);
      expect(Number(limited.headers.get('retry-after'))).to.be.greaterThan(0);
      expect(limited.headers.get('content-type')).to.equal('text/html; charset=utf-8');
      expectPassPageHeaders(limited.headers);
      const text = await limited.text();
      expect(text).to.include('<h1>Too many requests</h1>').and.not.include('<svg');
      // Another address has its own bucket.
      expect((await from('198.51.100.9', batch.path)).status).to.equal(200);
    });
  });
});
