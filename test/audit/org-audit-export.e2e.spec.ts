// A tenant's audit export over HTTP: GET /api/v1/org/audit/events pages through the organization's
// own events with inclusion proofs and consistency proofs between heads; `audit verify
// --organization` checks the pages offline; nothing of another tenant is in them, sealed data stays
// sealed, a password hash is withheld; a key without org:audit:read is refused.
import { expect } from 'chai';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { passBody, startStack, type Stack, type Tenant } from '../support/stack.js';
import { AuditNotary } from '../../projections/audit-notary.js';
import { auditKeySet } from '../../shared/audit/audit-keys.js';
import type { OrgAuditPage } from '../../shared/audit/export-format.js';
import { AUDIT_TEST_KEK, auditCli, treeCaughtUp } from './audit-support.js';

describe('a tenant audit export (GET /api/v1/org/audit/events, audit verify --organization)', function () {
  this.timeout(120_000);
  let stack: Stack;
  let a: Tenant;
  let b: Tenant;
  let notary: AuditNotary;
  let dir: string;

  async function notarizeAndSign(): Promise<void> {
    await treeCaughtUp(stack.db, stack.store);
    await notary.signNow();
    await treeCaughtUp(stack.db, stack.store);
  }

  /** Every page, following next_cursor while has_more; the first page from `since`. */
  async function pages(apiKey: string, limit: number, since?: number, cursorFrom?: string): Promise<{ pages: OrgAuditPage[]; texts: string[] }> {
    const result: OrgAuditPage[] = [];
    const texts: string[] = [];
    let cursor = cursorFrom;
    for (let i = 0; i < 100; i++) {
      const query = new URLSearchParams({ limit: String(limit), ...(cursor ? { cursor } : {}), ...(since && !cursor ? { since_head: String(since) } : {}) });
      const response = await stack.request<OrgAuditPage>('GET', `/api/v1/org/audit/events?${query}`, { apiKey });
      expect(response.status, response.text).to.equal(200);
      expect(response.headers.get('cache-control')).to.equal('no-store');
      result.push(response.body);
      texts.push(response.text);
      cursor = response.body.next_cursor ?? undefined;
      if (!response.body.has_more) return { pages: result, texts };
    }
    throw new Error('more than 100 pages');
  }

  async function verifyPages(texts: readonly string[], extra: string[] = []) {
    const file = path.join(dir, `org-${Math.random().toString(36).slice(2)}.ndjson`);
    await writeFile(file, texts.join('\n') + '\n');
    return auditCli(stack.databaseUrl, dir)('audit', 'verify', file, '--keys', path.join(dir, 'keys.json'), '--organization', '--json', ...extra);
  }

  before(async () => {
    stack = await startStack({ label: 'audit_org' });
    dir = await mkdtemp(path.join(os.tmpdir(), 'guestpass-org-audit-'));
    a = await stack.seed.tenant({ name: 'Tenant A' });
    b = await stack.seed.tenant({ name: 'Tenant B' });
    await stack.seed.user(a.orgId, { email: 'host@a.example', password: 'correct horse battery staple' });
    for (let i = 0; i < 4; i++) await stack.request('POST', '/api/v1/org/passes', { apiKey: a.apiKey, json: passBody(a.facilityId) });
    for (let i = 0; i < 3; i++) await stack.request('POST', '/api/v1/org/passes', { apiKey: b.apiKey, json: passBody(b.facilityId, { email: 'b-guest@b.example' }) });
    notary = new AuditNotary({ store: stack.store, knex: stack.db, kek: AUDIT_TEST_KEK, headIntervalMs: 3_600_000, sampleEveryMs: 0 });
    await notary.start();
    await notarizeAndSign();
    await writeFile(path.join(dir, 'keys.json'), JSON.stringify(await auditKeySet(stack.db)));
  });

  after(async () => {
    await notary?.stop();
    await stack?.stop();
  });

  it('pages through the tenant\'s own events with proofs that verify offline, and nothing of the other tenant', async () => {
    const { pages: all, texts } = await pages(a.apiKey, 3);
    expect(all.length).to.be.greaterThan(2);
    const items = all.flatMap((p) => p.items);
    const { rows } = await stack.db.raw<{ rows: Array<{ n: string }> }>('SELECT count(*)::text AS n FROM audit_org_events WHERE org_id = ?', [a.orgId]);
    expect(items.length).to.equal(Number(rows[0]!.n));
    for (const item of items) {
      if (item.event) {
        const orgId = (item.event.data as { orgId?: number }).orgId;
        if (orgId !== undefined) expect(orgId).to.equal(a.orgId);
      }
    }
    // Nothing of tenant B: none of its streams, event ids or guest addresses.
    const { rows: bEvents } = await stack.db.raw<{ rows: Array<{ event_id: string; stream: string }> }>(
      'SELECT l.event_id::text, e.stream_name AS stream FROM audit_leaves l JOIN events e ON e.event_id = l.event_id WHERE l.org_id = ?',
      [b.orgId],
    );
    expect(bEvents.length).to.be.greaterThan(3);
    const text = texts.join('\n');
    for (const e of bEvents) expect(text).not.to.include(e.event_id);
    expect(text).not.to.include(`organization-${b.orgId}"`);
    expect(text).not.to.include('b-guest@b.example');
    // Sealed guest data stays sealed; the password hash is withheld, its leaf still proved.
    expect(text).not.to.include('Grace');
    const withheld = items.filter((i) => i.withheld !== null);
    expect(withheld.map((i) => i.withheld)).to.deep.equal(['carries a password hash']);
    expect(withheld[0]!.event).to.equal(null);
    expect(text).not.to.include('$scrypt');

    const verified = await verifyPages(texts);
    expect(verified.code, verified.err.join('\n')).to.equal(0);
    expect(JSON.parse(verified.out.at(-1)!)).to.include({ verified: true, events: items.length });
  });

  it('proves a later head consistent with the earlier one across pages, and checks a saved head (since_head)', async () => {
    const first = await pages(a.apiKey, 2);
    const firstHead = first.pages[0]!.head!;
    // New events and a new head between two pages of the same walk.
    await stack.request('POST', '/api/v1/org/passes', { apiKey: a.apiKey, json: passBody(a.facilityId) });
    await notarizeAndSign();
    const more = await pages(a.apiKey, 2, undefined, first.pages.at(-1)!.next_cursor!);
    expect(more.pages[0]!.consistency).to.include({ from_head: firstHead.head, to_head: firstHead.head + 1 });
    expect(more.pages.flatMap((p) => p.items).length).to.be.greaterThan(0);
    const verified = await verifyPages([...first.texts, ...more.texts]);
    expect(verified.code, verified.out.join('\n')).to.equal(0);

    // A head saved earlier: the first page proves the new head consistent with it.
    const trusted = path.join(dir, 'trusted.json');
    await writeFile(trusted, JSON.stringify(firstHead));
    const fresh = await pages(a.apiKey, 50, firstHead.head);
    expect(fresh.pages[0]!.consistency).to.include({ from_head: firstHead.head });
    expect((await verifyPages(fresh.texts, ['--trusted-head', trusted])).code).to.equal(0);
    // Without the proof the saved head cannot be tied to the export: refused.
    const unproved = await pages(a.apiKey, 50);
    const refused = await verifyPages(unproved.texts, ['--trusted-head', trusted]);
    expect(refused.code).to.equal(1);
    expect(JSON.parse(refused.out.at(-1)!).failure.kind).to.equal('inconsistent head');
  });

  it('refuses a page whose event was altered, or whose proof was', async () => {
    const { texts } = await pages(a.apiKey, 100);
    const altered = texts.map((t) => t.replace(/"name":"Tenant A"/, '"name":"Tenant Z"'));
    expect(altered.join()).not.to.equal(texts.join());
    const changed = await verifyPages(altered);
    expect(changed.code).to.equal(1);
    expect(JSON.parse(changed.out.at(-1)!).failure.kind).to.equal('changed');
    const page = JSON.parse(texts[0]!) as OrgAuditPage;
    const badProof = { ...page, items: page.items.map((i, n) => (n === 1 ? { ...i, inclusion_proof: [...i.inclusion_proof].reverse() } : i)) };
    const missing = await verifyPages([JSON.stringify(badProof)]);
    expect(JSON.parse(missing.out.at(-1)!).failure).to.include({ kind: 'missing', leaf_index: page.items[1]!.leaf_index });
  });

  it('refuses an API key without org:audit:read (403 naming the scope)', async () => {
    const { apiKey } = await stack.seed.apiKey(a.orgId, a.userId, { scopes: ['org:passes:read'] });
    const response = await stack.request('GET', '/api/v1/org/audit/events', { apiKey });
    expect(response.status).to.equal(403);
    expect(response.headers.get('www-authenticate')).to.include('org:audit:read');
  });

  it('publishes the audit key set at /.well-known/audit-keys.json, apart from the OAuth keys', async () => {
    const response = await stack.request('GET', '/.well-known/audit-keys.json');
    expect(response.status).to.equal(200);
    expect(response.body.keys[0]).to.include({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' });
    const oauth = await stack.request('GET', '/.well-known/jwks.json');
    const oauthKids = (oauth.body.keys as Array<{ kid: string }>).map((k) => k.kid);
    expect(oauthKids).not.to.include(response.body.keys[0].kid);
  });
});
