// /settings/api-keys lists each key's name and last use: a key created in the console with a name
// lists with it and "Never"; one call of the organization API with it and its last use is a time;
// a key from before keys had names (an ApiKeyCreated of schema version 1 in the log) is upcast and
// lists as "(unnamed)". A key without a name is refused by the form.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { startStack, type Stack } from '../support/stack.js';
import { csrfTokenOf, inputValue } from '../sign-in/support/browser.js';
import { READ_MODELS } from '../../shared/db/read-models.js';
import { LAST_USE_TABLE } from '../../shared/auth/api-key-last-use.js';
import { hashApiKey } from '../../shared/auth/api-key-auth.js';
import { streams } from '../../shared/domain/events.js';
import { browserSignedInAgo } from './support/console-session.js';
import type { Browser } from '../sign-in/support/browser.js';

/** The list's row of `keyId`, by column heading, as text without tags; fails when the key is not listed. */
async function listedRow(browser: Browser, keyId: string): Promise<Record<string, string>> {
  const page = await browser.get('/settings/api-keys');
  expect(page.status).to.equal(200);
  const cellsOf = (tr: string) => [...tr.matchAll(/<t[hd]\b[^>]*>([\s\S]*?)<\/t[hd]>/g)].map((m) => m[1]!.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim());
  const rows = [...page.text.matchAll(/<tr\b[\s\S]*?<\/tr>/g)].map((m) => m[0]);
  const head = cellsOf(rows[0]!);
  const row = rows.find((tr) => tr.includes(keyId));
  expect(row, `row of ${keyId}`).to.be.a('string');
  expect(page.text).to.not.match(/svc_sk_/);
  return Object.fromEntries(cellsOf(row!).map((cell, i) => [head[i]!, cell]));
}

/** Polls (at most 5 s) until `check` holds, then returns its last value. */
async function eventually<T>(what: string, read: () => Promise<T>, check: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)} after 5 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('console API keys: name and last use', function () {
  this.timeout(60_000);
  let stack: Stack;

  before(async () => {
    stack = await startStack({ label: 'console_api_key_names' });
  });
  after(async () => {
    await stack?.stop();
  });

  it('lists a key created with a name, "Never" used, then the time of its first organization API call', async () => {
    const tenant = await stack.seed.tenant();
    const admin = await stack.seed.user(tenant.orgId, { roles: ['admin'] });
    const browser = await browserSignedInAgo(stack, { userId: admin.userId, orgId: tenant.orgId });
    const form = await browser.get('/settings/api-keys/new');
    expect(form.text).to.match(/<label for="[^"]+">Name<\/label>/);
    const shown = await browser.post('/settings/api-keys/new', { csrf: csrfTokenOf(form.text), name: '  Reception kiosk ', scopes: 'org:facilities:read' });
    expect(shown.status).to.equal(200);
    const apiKey = inputValue(shown.text, 'secret-value') ?? /id="secret-value"[^>]*value="([^"]+)"/.exec(shown.text)?.[1];
    expect(apiKey).to.match(/^svc_sk_/);
    const { key_id: keyId, name } = await stack.db(READ_MODELS.apiKeys).first('key_id', 'name').where({ key_hash: hashApiKey(apiKey!) });
    expect(name).to.equal('Reception kiosk');

    const before = await listedRow(browser, keyId);
    expect(before).to.include({ Name: 'Reception kiosk', 'Last used': 'Never' });

    const startedAt = new Date();
    const call = await stack.request('GET', '/api/v1/org/facilities', { apiKey: apiKey! });
    expect(call.status).to.equal(200);
    // Written off the request's path: it lands shortly after the answer.
    const recorded = await eventually(
      'last use of the key',
      async () => (await stack.db(LAST_USE_TABLE).first('last_used_at').where({ key_id: keyId }))?.last_used_at as Date | undefined,
      (at) => at !== undefined,
    );
    expect(recorded!.getTime()).to.be.at.least(startedAt.getTime() - 1000);
    const after = await listedRow(browser, keyId);
    // The page shows times in UTC as YYYY-MM-DD HH:MM.
    expect(after).to.include({ Name: 'Reception kiosk', 'Last used': `${recorded!.toISOString().slice(0, 16).replace('T', ' ')} UTC` });
    // The tenant's other key was not used.
    expect(await listedRow(browser, tenant.keyId)).to.include({ 'Last used': 'Never' });
  });

  it('lists a key from an ApiKeyCreated of schema version 1 (no name) as "(unnamed)"', async () => {
    const tenant = await stack.seed.tenant();
    const admin = await stack.seed.user(tenant.orgId, { roles: ['admin'] });
    const keyId = `key_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
    await stack.store.appendToStream(
      streams.apiKey(keyId),
      [
        {
          id: randomUUID(),
          type: 'ApiKeyCreated',
          // Version 1's fields exactly: a `name` here would be refused by the version 1 schema.
          data: { keyId, orgId: tenant.orgId, userId: admin.userId, keyHash: hashApiKey(`svc_sk_${randomUUID()}`), scopes: ['org:passes:read'], expiresAt: null, allowedIps: [] },
          metadata: { correlationId: randomUUID(), causationId: null, actor: { kind: 'operator' }, occurredAt: new Date().toISOString(), schemaVersion: 1 },
        },
      ],
      'no_stream',
    );
    const [read] = await stack.store.readStream(streams.apiKey(keyId));
    expect(read!.metadata.schemaVersion).to.equal(2);
    expect((read!.data as { name: unknown }).name).to.equal(null);
    await eventually('the key in the read model', () => stack.db(READ_MODELS.apiKeys).first('name').where({ key_id: keyId }), (row) => row !== undefined);
    const browser = await browserSignedInAgo(stack, { userId: admin.userId, orgId: tenant.orgId });
    expect(await listedRow(browser, keyId)).to.include({ Name: '(unnamed)', 'Last used': 'Never' });
  });

  it('refuses a key without a name or with a name over 100 characters, keeping the input, and creates none', async () => {
    const tenant = await stack.seed.tenant();
    const admin = await stack.seed.user(tenant.orgId, { roles: ['admin'] });
    const browser = await browserSignedInAgo(stack, { userId: admin.userId, orgId: tenant.orgId });
    const count = async () => (await stack.db(READ_MODELS.apiKeys).where({ org_id: tenant.orgId }).count({ n: '*' }))[0]!.n;
    const before = await count();
    const form = await browser.get('/settings/api-keys/new');
    const empty = await browser.post('/settings/api-keys/new', { csrf: csrfTokenOf(form.text), name: '   ', scopes: 'org:passes:read' });
    expect(empty.status).to.equal(400);
    expect(empty.text).to.include('Enter a name for the key');
    const long = await browser.post('/settings/api-keys/new', { csrf: csrfTokenOf(form.text), name: 'x'.repeat(101), scopes: 'org:passes:read' });
    expect(long.status).to.equal(400);
    expect(long.text).to.include('at most 100 characters');
    expect(inputValue(long.text, 'name')).to.equal('x'.repeat(101));
    expect(await count()).to.equal(before);
  });
});
