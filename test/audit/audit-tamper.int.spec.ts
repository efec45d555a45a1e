// The audit log end to end over a real PostgreSQL event store: the notary notarizes a stack's log,
// `audit export` and `audit verify` (the CLI, offline) say `verified`, and each kind of tampering
// with the events table directly (a changed row, a deleted one, one inserted in the middle, two
// swapped, the tail truncated after a head) is named by the verifier at the right position and
// by the notary's sample check; erasing a member and a guest keeps the log verifiable; a log
// rewritten together with its heads is caught by a head the auditor saved earlier.
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { passBody, startStack, type Stack, type Tenant } from '../support/stack.js';
import { AuditNotary } from '../../projections/audit-notary.js';
import { checkLeaves } from '../../projections/audit-sample-check.js';
import { storedEvents } from '../../shared/event-store/validating-event-store.js';
import { latestHead, readTreeState } from '../../shared/audit/postgres-audit-tree.js';
import { eraseMember } from '../../command-service/members/erase-member.js';
import { addMember } from '../../command-service/members/add-member.js';
import { AUDIT_TEST_KEK, exportAndVerify, treeCaughtUp } from './audit-support.js';

interface EventRow {
  global_position: string;
  transaction_id: string;
  stream_name: string;
  stream_position: number;
  event_id: string;
  type: string;
  data: string;
  metadata: string;
  recorded_at: string;
}

describe('audit log: notary, export, verify and tamper evidence (PostgreSQL event store)', function () {
  this.timeout(120_000);
  let stack: Stack;
  let tenantA: Tenant;
  let notary: AuditNotary;
  const operator = () => ({ correlationId: randomUUID(), causationId: null, actor: { kind: 'operator' as const }, now: new Date() });

  async function notarizeAndSign(): Promise<void> {
    await treeCaughtUp(stack.db, stack.store);
    await notary.signNow();
    await treeCaughtUp(stack.db, stack.store); // the head's own event is a leaf too
  }

  /** The events table row of leaf `index`, as the notary recorded it. */
  async function rowOfLeaf(index: number): Promise<EventRow> {
    const { rows } = await stack.db.raw<{ rows: EventRow[] }>(
      `SELECT e.global_position::text, e.transaction_id::text, e.stream_name, e.stream_position, e.event_id::text, e.type, e.data::text, e.metadata::text, e.recorded_at::text
         FROM events e JOIN audit_leaves l ON l.event_id = e.event_id WHERE l.leaf_index = ?`,
      [index],
    );
    return rows[0]!;
  }

  const positionOf = (row: EventRow) => `${row.transaction_id}/${row.global_position}`;

  async function reinsert(rows: readonly EventRow[]): Promise<void> {
    for (const r of rows) {
      await stack.db.raw(
        `INSERT INTO events (global_position, transaction_id, stream_name, stream_position, event_id, type, data, metadata, recorded_at)
         VALUES (?, ?::xid8, ?, ?, ?, ?, ?::jsonb, ?::jsonb, ?::timestamptz)`,
        [r.global_position, r.transaction_id, r.stream_name, r.stream_position, r.event_id, r.type, r.data, r.metadata, r.recorded_at],
      );
    }
  }

  async function verifyExport(extra: { verifyArgs?: string[] } = {}) {
    const run = await exportAndVerify(stack.db, stack.databaseUrl, extra);
    return { ...run, result: JSON.parse(run.out.at(-1) ?? '{}') as { verified: boolean; events: number; first_head: number; last_head: number; failure?: { kind: string; position: string; event_id: string; leaf_index: number; detail: string } } };
  }

  async function sampleAll() {
    const { treeSize } = await readTreeState(stack.db);
    notary.integrity.mismatched.clear();
    return checkLeaves({ knex: stack.db, store: storedEvents(stack.store), integrity: notary.integrity }, Array.from({ length: treeSize }, (_, i) => i));
  }

  before(async () => {
    stack = await startStack({ label: 'audit_tamper' });
    tenantA = await stack.seed.tenant({ name: 'Tenant A' });
    const tenantB = await stack.seed.tenant({ name: 'Tenant B' });
    for (let i = 0; i < 3; i++) expect((await stack.request('POST', '/api/v1/org/passes', { apiKey: tenantA.apiKey, json: passBody(tenantA.facilityId) })).status).to.equal(201);
    for (let i = 0; i < 2; i++) expect((await stack.request('POST', '/api/v1/org/passes', { apiKey: tenantB.apiKey, json: passBody(tenantB.facilityId) })).status).to.equal(201);
    notary = new AuditNotary({ store: stack.store, knex: stack.db, kek: AUDIT_TEST_KEK, headIntervalMs: 3_600_000, sampleEveryMs: 0 });
    await notary.start();
    await notarizeAndSign();
    // More events after the first head, then a second head.
    await stack.request('POST', '/api/v1/org/passes', { apiKey: tenantA.apiKey, json: passBody(tenantA.facilityId) });
    await notarizeAndSign();
  });

  after(async () => {
    await notary?.stop();
    await stack?.stop();
  });

  it('verifies the untouched log: every event, every head, and the sample check finds nothing', async () => {
    const { code, result } = await verifyExport();
    const head = await latestHead(stack.db);
    expect(code).to.equal(0);
    // Two heads asked for, and one more when the notary's first batch found no head at all (overdue
    // by its hourly rule) before the first was asked for: which comes first is the machine's timing.
    expect(head!.head).to.be.oneOf([2, 3]);
    expect(result).to.include({ verified: true, events: head!.tree_size, first_head: 1, last_head: head!.head });
    expect(await sampleAll()).to.deep.equal([]);
  });

  it('names an UPDATEd event as changed, at its position', async () => {
    const row = await rowOfLeaf(5);
    await stack.db.raw(`UPDATE events SET data = data || '{"name":"Mallory"}'::jsonb WHERE event_id = ?`, [row.event_id]);
    try {
      const { code, result } = await verifyExport();
      expect(code).to.equal(1);
      expect(result.failure).to.include({ kind: 'changed', position: positionOf(row), event_id: row.event_id, leaf_index: 5 });
      const found = await sampleAll();
      expect(found.map((f) => [f.index, f.problem])).to.deep.equal([[5, 'changed']]);
      expect(notary.integrity.mismatched.size).to.equal(1);
      const readiness = await notary.integrity.readinessCheck().check().then(() => 'ok', (error: Error) => error.message);
      expect(readiness).to.match(/no longer match/);
    } finally {
      await stack.db.raw('UPDATE events SET data = ?::jsonb WHERE event_id = ?', [row.data, row.event_id]);
    }
    expect(await sampleAll()).to.deep.equal([]);
    await notary.integrity.readinessCheck().check();
  });

  it('names a DELETEd event as missing, at its position', async () => {
    const row = await rowOfLeaf(6);
    await stack.db.raw('DELETE FROM events WHERE event_id = ?', [row.event_id]);
    try {
      const { result } = await verifyExport();
      expect(result.failure).to.include({ kind: 'missing', position: positionOf(row), event_id: row.event_id, leaf_index: 6 });
      expect((await sampleAll()).map((f) => [f.index, f.problem])).to.deep.equal([[6, 'missing']]);
    } finally {
      await reinsert([row]);
    }
    expect((await verifyExport()).result.verified).to.equal(true);
  });

  it('names an event INSERTed in the middle as extra, at its position', async () => {
    const { treeSize } = await readTreeState(stack.db);
    // A leaf that is the last of its transaction: a row of that transaction with a higher sequence sorts right after it.
    let k = 3;
    while ((await rowOfLeaf(k)).transaction_id === (await rowOfLeaf(k + 1)).transaction_id) k++;
    expect(k).to.be.below(treeSize - 1);
    const before = await rowOfLeaf(k);
    const id = randomUUID();
    const { rows } = await stack.db.raw<{ rows: Array<{ gp: string }> }>('SELECT max(global_position) + 1000 AS gp FROM events');
    const gp = rows[0]!.gp;
    await stack.db.raw(
      `INSERT INTO events (global_position, transaction_id, stream_name, stream_position, event_id, type, data, metadata, recorded_at)
       VALUES (?, ?::xid8, 'organization-999', 0, ?, 'OrganizationCreated', '{"orgId":999,"name":"Ghost","inviteAllowance":1}', ?::jsonb, now())`,
      [gp, before.transaction_id, id, before.metadata],
    );
    try {
      const { result } = await verifyExport();
      expect(result.failure).to.include({ kind: 'extra', position: `${before.transaction_id}/${gp}`, event_id: id, leaf_index: k + 1 });
      expect((await sampleAll()).map((f) => [f.index, f.problem])).to.deep.equal([[k + 1, 'extra']]);
    } finally {
      await stack.db.raw('DELETE FROM events WHERE event_id = ?', [id]);
    }
  });

  it('names two events that swapped positions as reordered, at the first position', async () => {
    const [a, b] = [await rowOfLeaf(3), await rowOfLeaf(8)];
    const swap = async (x: EventRow, y: EventRow) =>
      stack.db.transaction(async (trx) => {
        await trx.raw('UPDATE events SET global_position = -global_position WHERE event_id IN (?, ?)', [x.event_id, y.event_id]);
        await trx.raw('UPDATE events SET global_position = ?, transaction_id = ?::xid8 WHERE event_id = ?', [y.global_position, y.transaction_id, x.event_id]);
        await trx.raw('UPDATE events SET global_position = ?, transaction_id = ?::xid8 WHERE event_id = ?', [x.global_position, x.transaction_id, y.event_id]);
      });
    await swap(a, b);
    try {
      const { result } = await verifyExport();
      expect(result.failure).to.include({ kind: 'reordered', position: positionOf(a), event_id: b.event_id, leaf_index: 3 });
      const found = await sampleAll();
      expect(found.map((f) => [f.index, f.problem])).to.deep.equal([[3, 'reordered'], [8, 'reordered']]);
    } finally {
      await swap({ ...a, global_position: b.global_position, transaction_id: b.transaction_id }, { ...b, global_position: a.global_position, transaction_id: a.transaction_id });
    }
    expect((await verifyExport()).result.verified).to.equal(true);
  });

  it('names the first event of a tail truncated after a head as missing', async () => {
    const head = (await latestHead(stack.db))!;
    const from = head.tree_size - 3;
    const rows: EventRow[] = [];
    for (let i = from; i < head.tree_size; i++) rows.push(await rowOfLeaf(i));
    // Everything from that event on, the heads' own events included.
    const { rows: tail } = await stack.db.raw<{ rows: EventRow[] }>(
      `SELECT global_position::text, transaction_id::text, stream_name, stream_position, event_id::text, type, data::text, metadata::text, recorded_at::text
         FROM events WHERE (transaction_id, global_position) >= (?::xid8, ?) ORDER BY transaction_id, global_position`,
      [rows[0]!.transaction_id, rows[0]!.global_position],
    );
    await stack.db.raw('DELETE FROM events WHERE (transaction_id, global_position) >= (?::xid8, ?)', [rows[0]!.transaction_id, rows[0]!.global_position]);
    try {
      const { result } = await verifyExport();
      expect(result.failure).to.include({ kind: 'missing', position: positionOf(rows[0]!), event_id: rows[0]!.event_id, leaf_index: from });
      const found = await sampleAll();
      const { treeSize } = await readTreeState(stack.db);
      expect(found.map((f) => f.index)).to.deep.equal(Array.from({ length: treeSize - from }, (_, i) => from + i));
      expect(found.every((f) => f.problem === 'missing')).to.equal(true);
    } finally {
      await reinsert(tail);
    }
    expect((await verifyExport()).result.verified).to.equal(true);
  });

  it('still verifies after a member and a guest are erased (their data stays sealed, the leaves unchanged)', async () => {
    const { memberId } = await addMember(stack.deps, { orgId: tenantA.orgId, firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' }, operator());
    const created = await stack.request('POST', '/api/v1/org/passes', { apiKey: tenantA.apiKey, json: passBody(tenantA.facilityId, { email: 'erase.me@example.com' }) });
    expect(created.status).to.equal(201);
    await notarizeAndSign();
    const { rows } = await stack.db.raw<{ rows: Array<{ batch: string }> }>(
      "SELECT data->>'batchId' AS batch FROM events WHERE type = 'PassCreated' ORDER BY transaction_id DESC, global_position DESC LIMIT 1",
    );
    await eraseMember(stack.deps, memberId, { includeName: true }, operator());
    await stack.deps.subjectKeys.destroy(rows[0]!.batch);
    await notarizeAndSign();
    const { code, result } = await verifyExport();
    expect(code).to.equal(0);
    expect(result.verified).to.equal(true);
    expect(await sampleAll()).to.deep.equal([]);
  });

  it('catches a log rewritten together with every stored head with a head saved earlier (--trusted-head)', async () => {
    const clean = await verifyExport();
    const headLine = (await import('node:fs/promises')).readFile(clean.file, 'utf8').then((t) => t.split('\n').find((l) => l.includes('"kind":"head"'))!);
    const trusted = path.join(clean.dir, 'trusted-head.json');
    await writeFile(trusted, await headLine);
    // The rewrite: an old event changed, the notary's tables and the heads in the log dropped, a new notary run from scratch.
    await notary.stop();
    const row = await rowOfLeaf(2);
    await stack.db.raw(`UPDATE events SET data = data || '{"name":"Rewritten"}'::jsonb WHERE event_id = ?`, [row.event_id]);
    await stack.db.raw("DELETE FROM events WHERE stream_name = 'audit-tree-heads'");
    await stack.db.raw('TRUNCATE audit_tree_state, audit_tree_nodes, audit_leaves, audit_tree_heads, audit_org_events, audit_org_links');
    notary = new AuditNotary({ store: stack.store, knex: stack.db, kek: AUDIT_TEST_KEK, headIntervalMs: 3_600_000, sampleEveryMs: 0 });
    await notary.start();
    await notarizeAndSign();
    expect((await verifyExport()).result.verified, 'a consistent rewrite verifies on its own').to.equal(true);
    const { code, result } = await verifyExport({ verifyArgs: ['--trusted-head', trusted] });
    expect(code).to.equal(1);
    expect(result.failure?.kind).to.equal('inconsistent head');
    expect(result.failure?.detail).to.match(/rewritten/);
  });
});
