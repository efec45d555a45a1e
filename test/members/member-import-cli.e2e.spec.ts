import { expect } from 'chai';
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createKnex, type Knex } from '../../shared/db/knex.js';
import { freshDatabase } from '../support/database.js';

// `npx guestpass member import` as an operator runs it: the package's bin in a process of its own.
const BIN = fileURLToPath(new URL('../../bin/guestpass.js', import.meta.url));

function guestpass(env: Record<string, string>, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? os.tmpdir(), LOG_LEVEL: 'silent', PROJECTION_WAIT_MS: '5000', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const HEADER = 'first_name,last_name,email,phone,job_title,department,external_id';
const GOOD = [
  'Ada,Lovelace,ada@example.com,+44 20 7946 0001,Analyst,Engines,HR-1',
  '"Hopper, Jr.",Grace,GRACE@example.com,,"Rear Admiral, retired","Navy ""R&D""",HR-2',
  'Alan,Turing,,,Cryptanalyst,Hut 8,HR-3',
  'Edsger,Dijkstra,edsger@example.com,,,,',
];
const BAD = [
  'Bad,Email,not-an-address,,,,HR-90', // row 6
  ',Nameless,nameless@example.com,,,,', // row 7
  'Too,Few,fields', // row 8
  'Ada,Again,ADA@example.com,,,,', // row 9: the email of row 2
];

describe('member import (npx guestpass member import, its own process)', function () {
  this.timeout(120_000);
  let dir: string;
  let env: Record<string, string>;
  let db: Knex;
  let orgId: number;

  const eventCount = async () => Number((await db('events').count<Array<{ count: string }>>('* as count'))[0]!.count);
  const run = async (...args: string[]) => {
    const result = await guestpass(env, args);
    return { ...result, json: () => JSON.parse(result.stdout.trim().split('\n').at(-1) ?? 'null') as Record<string, any> };
  };

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'guestpass-member-import-'));
    const url = await freshDatabase('member_import');
    env = { DATABASE_URL: url, GUESTPASS_DATA_DIR: dir };
    const org = await run('org', 'create', '--name', 'Acme', '--json');
    expect(org.code, org.stderr).to.equal(0);
    orgId = org.json().id;
    db = createKnex(url, { max: 2 });
  });
  after(async () => {
    await db?.destroy();
    await rm(dir, { recursive: true, force: true });
  });

  it('imports the good rows, reports each bad one by row and field, and a re-run changes nothing', async () => {
    const file = path.join(dir, 'people.csv');
    await writeFile(file, [HEADER, ...GOOD, ...BAD].join('\r\n') + '\r\n');

    const first = await run('member', 'import', '--org', String(orgId), file, '--json');
    expect(first.code, first.stderr).to.equal(1); // some rows failed; the others are in
    expect(first.json()).to.deep.include({ rows: 8, added: 4, updated: 0, unchanged: 0, failed: 4, caught_up: true });
    expect(first.json().errors).to.deep.equal([
      { row: 6, message: 'email: not an address' },
      { row: 7, message: 'first_name: required' },
      { row: 8, message: 'has 3 fields, the header has 7' },
      { row: 9, message: 'email: also on row 2 (one row per member)' },
    ]);
    const members = await db('member_directory').where({ org_id: orgId }).orderBy('external_id');
    expect(members.map((m) => m.name)).to.include.members(['Ada Lovelace', 'Hopper, Jr. Grace', 'Alan Turing', 'Edsger Dijkstra']);
    expect(members.find((m) => m.external_id === 'HR-2')).to.deep.include({ job_title: 'Rear Admiral, retired', department: 'Navy "R&D"' });

    const events = await eventCount();
    const again = await run('member', 'import', '--org', String(orgId), file, '--json');
    expect(again.json()).to.deep.include({ rows: 8, added: 0, updated: 0, unchanged: 4, failed: 4 });
    expect(await eventCount()).to.equal(events);

    // Text mode: one line per bad row on stderr, the summary on stdout.
    const text = await run('member', 'import', '--org', String(orgId), file);
    expect(text.stderr).to.include('row 6: email: not an address');
    expect(text.stdout).to.match(/8 rows, 0 added, 0 updated, 4 unchanged, 4 failed/);
    expect(await eventCount()).to.equal(events);
  });

  it('matches by email, else by external id, and records only what changed', async () => {
    const file = path.join(dir, 'changes.csv');
    await writeFile(
      file,
      [
        'external_id,first_name,last_name,email,job_title',
        'HR-1,Ada,Lovelace,ada@example.com,Chief Analyst', // by email: the job title changed (phone and department cleared)
        'HR-3,Alan,Turing,alan@example.com,Cryptanalyst', // by external id: gains an email
      ].join('\n'),
    );
    const events = await eventCount();
    const result = await run('member', 'import', '--org', String(orgId), file, '--json');
    expect(result.code, result.stdout + result.stderr).to.equal(0);
    expect(result.json()).to.deep.include({ rows: 2, added: 0, updated: 2, failed: 0 });
    expect(await eventCount()).to.equal(events + 2);
    const rerun = await run('member', 'import', '--org', String(orgId), file, '--json');
    expect(rerun.json()).to.deep.include({ added: 0, updated: 0, unchanged: 2 });
    expect(await eventCount()).to.equal(events + 2);
  });

  it('refuses a header with unknown columns, naming them, before writing anything', async () => {
    const file = path.join(dir, 'unknown.csv');
    await writeFile(file, 'first_name,last_name,salary,shoe_size\nA,B,1,2\n');
    const events = await eventCount();
    const result = await run('member', 'import', '--org', String(orgId), file, '--json');
    expect(result.code).to.equal(1);
    expect(result.json()).to.deep.include({ error: 'validation_failed' });
    expect(result.json().message).to.match(/unknown columns "salary", "shoe_size"/);
    expect(await eventCount()).to.equal(events);
    const missing = await run('member', 'import', '--org', String(orgId), path.join(dir, 'nope.csv'));
    expect(missing.code).to.equal(2);
  });

  it('adds, updates, deactivates, reactivates and erases one member; user create prints its member id', async () => {
    const added = await run('member', 'add', '--org', String(orgId), '--first-name', 'Barbara', '--last-name', 'Liskov', '--email', 'barbara@example.com', '--json');
    expect(added.code, added.stderr).to.equal(0);
    const id = added.json().id as string;
    expect(id).to.match(/^emp_[0-9a-f]{32}$/);
    expect((await run('member', 'update', id, '--job-title', 'Professor', '--json')).json()).to.deep.equal({ id, changed: true });
    expect((await run('member', 'update', id, '--job-title', 'Professor', '--json')).json()).to.deep.equal({ id, changed: false });
    expect((await run('member', 'deactivate', id, '--json')).json()).to.deep.equal({ id, changed: true });
    expect((await run('member', 'reactivate', id, '--json')).json()).to.deep.equal({ id, changed: true });
    expect((await run('member', 'erase', id, '--include-name', '--json')).json()).to.deep.equal({ id, changed: true, include_name: true });
    const refused = await run('member', 'update', id, '--email', 'barbara@example.com', '--json');
    expect(refused.code).to.equal(1);
    expect(refused.json()).to.deep.include({ error: 'conflict' });
    const badId = await run('member', 'deactivate', 'emp_nope');
    expect(badId.code).to.equal(2);
    const unknown = await run('member', 'deactivate', `emp_${'0'.repeat(32)}`, '--json');
    expect(unknown.code).to.equal(1);
    expect(unknown.json().error).to.equal('not_found');

    const user = await run('user', 'create', '--org', String(orgId), '--email', 'user@example.com', '--first-name', 'Uma', '--last-name', 'User', '--json');
    expect(user.code, user.stderr).to.equal(0);
    expect(user.json().member_id).to.match(/^emp_[0-9a-f]{32}$/);
  });
});
