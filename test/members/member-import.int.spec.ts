import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { startStack, type Stack } from '../support/stack.js';
import { testDataKeyRing } from '../support/data-kek.js';
import type { CommandDeps } from '../../command-service/command-deps.js';
import type { CommandContext } from '../../shared/event-store/command-handler.js';
import { loadContactHasher } from '../../shared/crypto/postgres-contact-search-key.js';
import { importMembers, type ImportCounts } from '../../command-service/members/import-members.js';
import { eraseMember } from '../../command-service/members/erase-member.js';

// The import in-process, on files of several chunks (chunks are 512 rows): rows are matched,
// decided and written a chunk at a time, and what it reports must not depend on where the chunk
// boundaries fall.
const HEADER = 'first_name,last_name,email,phone,job_title,department,external_id';
const ROWS = 1200;
const row = (i: number, title = 'Engineer') => `First${i},Last${i},m${i}@example.com,+49151${String(i).padStart(7, '0')},${title},Dept ${i % 7},HR-${i}`;

const ctx = (): CommandContext => ({ correlationId: randomUUID(), causationId: null, actor: { kind: 'operator' }, now: new Date() });

describe('member import over several chunks (in-process, real stack)', function () {
  this.timeout(120_000);
  let stack: Stack;
  let deps: CommandDeps;
  let orgId: number;

  before(async () => {
    stack = await startStack({ label: 'member_import' });
    deps = { ...stack.deps, contactHasher: await loadContactHasher(stack.db, testDataKeyRing()) };
    orgId = await stack.seed.organization();
  });
  after(() => stack?.stop());

  async function run(lines: readonly string[]) {
    const errors: Array<{ row: number; message: string }> = [];
    const progress: ImportCounts[] = [];
    const report = await importMembers(
      deps,
      { orgId, lines: (async function* () { yield* lines; })() },
      ctx(),
      { onRowError: (row, message) => errors.push({ row, message }), onProgress: (counts) => progress.push(counts) },
    );
    return { report, errors, progress };
  }
  const eventCount = async () => Number((await stack.db('events').count<Array<{ count: string }>>('* as count'))[0]!.count);

  it('adds every good row, reports the bad ones of every chunk in file order, and a re-run changes nothing', async () => {
    const data = Array.from({ length: ROWS }, (_, i) => row(i));
    data[1] = 'Bad,Email,not-an-address,,,,HR-X1'; // line 3
    data[700] = `Dup,Email,m10@example.com,,,,HR-X2`; // line 702: the email of line 12, two chunks back
    data[1100] = ',Nameless,nameless@example.com,,,,'; // line 1102
    const lines = [HEADER, ...data];

    const first = await run(lines);
    expect(first.report).to.deep.include({ rows: ROWS, added: ROWS - 3, updated: 0, unchanged: 0, failed: 3, caughtUp: true });
    expect(first.errors).to.deep.equal([
      { row: 3, message: 'email: not an address' },
      { row: 702, message: 'email: also on row 12 (one row per member)' },
      { row: 1102, message: 'first_name: required' },
    ]);
    expect(first.progress.length).to.be.at.least(3); // once per chunk
    expect(first.progress.map((p) => p.rows)).to.deep.equal([...first.progress.map((p) => p.rows)].sort((a, b) => a - b));
    const members = await stack.db('member_directory').where({ org_id: orgId }).count<Array<{ count: string }>>('* as count');
    expect(Number(members[0]!.count)).to.equal(ROWS - 3);

    const events = await eventCount();
    const again = await run(lines);
    expect(again.report).to.deep.include({ rows: ROWS, added: 0, updated: 0, unchanged: ROWS - 3, failed: 3 });
    expect(again.errors).to.deep.equal(first.errors);
    expect(await eventCount()).to.equal(events);
  });

  it('records only the rows that changed, refuses a second row for one member, and goes on past an erased one', async () => {
    const erased = await stack.db('member_directory').where({ org_id: orgId, external_id: 'HR-600' }).first();
    await eraseMember(deps, erased.member_id, {}, ctx());
    const data = Array.from({ length: ROWS }, (_, i) => row(i, i % 100 === 5 ? 'Lead' : 'Engineer'));
    data[1] = 'Bad,Email,not-an-address,,,,HR-X1';
    // Line 702 was refused the first time (a repeated email): now it adds its member. Line 703
    // has a new email: matched by its external id, changed.
    data[701] = row(701).replace('m701@', 'm701b@');
    // Line 22 is matched by its email and changes the external id; line 30, matched (in the same
    // chunk, before anything is written) by that external id, is the same member again.
    data[20] = row(20).replace('HR-20', 'HR-20b');
    data[28] = `Other,Person,other@example.com,,,,HR-20`;
    data[1100] = ',Nameless,nameless@example.com,,,,';
    const events = await eventCount();
    const changes = await run([HEADER, ...data]);

    const changed = Array.from({ length: ROWS }, (_, i) => i).filter((i) => i % 100 === 5 || i === 701 || i === 20);
    expect(changes.errors).to.deep.equal([
      { row: 3, message: 'email: not an address' },
      { row: 30, message: 'matches the same member as row 22 (one row per member)' },
      { row: 602, message: `member ${erased.member_id} was erased: its contact details cannot be added again` },
      { row: 1102, message: 'first_name: required' },
    ]);
    expect(changes.report).to.deep.include({ added: 1, updated: changed.length, failed: 4, unchanged: ROWS - 5 - changed.length });
    expect(await eventCount()).to.equal(events + 1 + changed.length); // the new member, one change per changed row
    const lead = await stack.db('member_directory').where({ org_id: orgId, external_id: 'HR-1005' }).first();
    expect(lead).to.deep.include({ job_title: 'Lead' });
  });
});
