// The database stops under the running service (a private PostgreSQL cluster of this suite, never
// the machine's): the API answers 503 temporarily_unavailable with Retry-After, the OAuth
// protocol endpoints their own error shape with the same status, a browser gets a 503 page, the
// error log names the database once for the whole outage, and the service serves again once the
// database is back.
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort, startEmbeddedPostgres, withDatabase, type EmbeddedServer } from '../../shared/db/embedded-postgres.js';
import { startStack, type Stack } from '../support/stack.js';
import { capturedLogger } from '../support/captured-logs.js';
import { OAUTH_PATHS } from '../../shared/oauth/discovery.js';
import { knowPartEndpoints } from '../../shared/outage/part-unavailable.js';

describe('a database outage: 503 with Retry-After, never 500, logged once', function () {
  this.timeout(180_000);
  let dir: string;
  let port: number;
  let server: EmbeddedServer | null = null;
  let stack: Stack | null = null;
  const logs = capturedLogger();
  let apiKey: string;
  let facilityId: number;

  const startServer = async () => (server = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg'), port, persistent: true }));

  before(async function () {
    this.timeout(180_000);
    dir = await mkdtemp(path.join(os.tmpdir(), 'gp-outage-'));
    port = await freePort();
    await startServer();
    // As runService does with the configured URLs: a refused connect to this port is the database.
    knowPartEndpoints([{ part: 'database', port }]);
    const admin = new pg.Client({ connectionString: server!.url });
    await admin.connect();
    await admin.query('CREATE DATABASE outage');
    await admin.end();
    stack = await startStack({ databaseUrl: withDatabase(server!.url, 'outage'), logger: logs.logger });
    ({ apiKey, facilityId } = await stack.seed.tenant());
  });

  after(async () => {
    knowPartEndpoints([]);
    await stack?.stop().catch(() => undefined);
    await server?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const create = () =>
    stack!.request('POST', '/api/v1/org/passes', { apiKey, json: { first_name: 'Ada', email: 'ada@example.com', arrival_date: new Date().toISOString().slice(0, 10), facility_id: facilityId } });

  it('serves before the outage', async () => {
    const created = await create();
    expect(created.status, created.text).to.equal(201);
  });

  it('answers every kind of request 503 while the database is stopped, and logs the outage once', async () => {
    await server!.stop();
    const before = logs.text().length;

    const created = await create();
    expect(created.status, created.text).to.equal(503);
    expect(created.headers.get('retry-after')).to.equal('5');
    expect(created.headers.get('cache-control')).to.equal('no-store');
    expect(created.body).to.deep.equal({ success: false, error: 'temporarily_unavailable', code: 'temporarily_unavailable', retry_after: 5 });

    const listed = await stack!.request('GET', '/api/v1/org/passes', { apiKey });
    expect(listed.status, listed.text).to.equal(503);
    expect(listed.headers.get('retry-after')).to.equal('5');

    // The token endpoint: an OAuth error body, not the business shape.
    const token = await stack!.request('POST', OAUTH_PATHS.token, {
      raw: new URLSearchParams({ grant_type: 'authorization_code', code: 'x'.repeat(43), client_id: `svc_${'1'.repeat(32)}`, code_verifier: 'v'.repeat(43), redirect_uri: 'https://rp.example/cb' }).toString(),
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect(token.status, token.text).to.equal(503);
    expect(token.body.error).to.equal('temporarily_unavailable');
    expect(token.body.error_description).to.be.a('string');
    expect(token.headers.get('retry-after')).to.equal('5');

    // A browser at the authorization endpoint (the client is looked up first): a page.
    const authorize = await stack!.request(
      'GET',
      `${OAUTH_PATHS.authorize}?${new URLSearchParams({ client_id: `svc_${'2'.repeat(32)}`, redirect_uri: 'https://rp.example/cb', response_type: 'code', scope: 'openid', code_challenge: 'c'.repeat(43), code_challenge_method: 'S256' })}`,
      { headers: { Accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' } },
    );
    expect(authorize.status, authorize.text.slice(0, 300)).to.equal(503);
    expect(authorize.headers.get('content-type')).to.match(/^text\/html/);
    expect(authorize.headers.get('retry-after')).to.equal('5');
    expect(authorize.text).to.include('Temporarily unavailable');

    for (let i = 0; i < 5; i++) expect((await create()).status).to.equal(503);

    const during = logs.text().slice(before);
    const outageLines = during.split('\n').filter((l) => l.includes('"part":"database"') && l.includes('is unavailable'));
    expect(outageLines, 'error lines naming the database').to.have.length(1);
    expect(JSON.parse(outageLines[0]!).level).to.equal(50);
    expect(during, 'a 500 or an unhandled error').to.not.match(/"status":500|unhandled error/);
  });

  it('serves again once the database is back', async () => {
    await startServer();
    const deadline = Date.now() + 30_000;
    let status = 0;
    while (Date.now() < deadline && status !== 201) {
      status = (await create()).status;
      if (status !== 201) {
        expect(status, 'while the pool reconnects').to.equal(503);
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    expect(status, 'a create within 30 s of the database starting').to.equal(201);
  });
});
