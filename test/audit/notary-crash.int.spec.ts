// SIGKILL the notary while the log grows, then start it again: every event is a leaf exactly
// once, in the log's order, with no gap, and every head is consistent with the one before it.
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { migratedDatabase } from '../support/database.js';
import { startChild, type Child } from '../support/child-process.js';
import { createEventStore } from '../../shared/event-store/create-event-store.js';
import { eventSchemas } from '../../shared/domain/event-schemas.js';
import type { EventStore, NewEvent } from '../../shared/event-store/event-store.js';
import type { Knex } from '../../shared/db/knex.js';
import { storedEvents } from '../../shared/event-store/validating-event-store.js';
import { headsBetween, latestHead, PostgresNodeStore, readTreeState } from '../../shared/audit/postgres-audit-tree.js';
import { consistencyProof } from '../../shared/audit/merkle-proofs.js';
import { verifyConsistency } from '../../shared/audit/merkle-verify.js';
import { fromHex } from '../../shared/audit/merkle-hash.js';
import { AUDIT_TEST_KEK, exportAndVerify, treeCaughtUp } from './audit-support.js';

const ENTRY = path.join(path.dirname(fileURLToPath(import.meta.url)), 'notary-process.ts');

function organizationCreated(orgId: number): NewEvent {
  return {
    id: randomUUID(),
    type: 'OrganizationCreated',
    data: { orgId, name: `Org ${orgId}`, inviteAllowance: 10 },
    metadata: { correlationId: randomUUID(), causationId: null, actor: { kind: 'operator' }, occurredAt: new Date().toISOString(), schemaVersion: 1 },
  };
}

describe('audit notary killed mid-run (SIGKILL) and restarted', function () {
  this.timeout(120_000);
  let knex: Knex;
  let store: EventStore;
  let url: string;
  let child: Child | null = null;

  before(async () => {
    ({ url, knex } = await migratedDatabase('audit_crash', { max: 8 }));
    store = createEventStore({ databaseUrl: url, eventStoreUrl: null, schemas: eventSchemas });
  });

  after(async () => {
    await child?.kill();
    await store?.close();
    await knex?.destroy();
  });

  const env = () => ({ PATH: process.env.PATH, DATABASE_URL: url, AUDIT_KEK: AUDIT_TEST_KEK.toString('hex'), LOG_LEVEL: 'silent' });

  it('leaves no leaf twice and no gap, and the next head is consistent with the last', async () => {
    let orgId = 0;
    let appending = true;
    const writer = (async () => {
      while (appending) {
        await Promise.all(Array.from({ length: 4 }, () => store.appendToStream(`organization-${++orgId}`, [organizationCreated(orgId)], 'no_stream')));
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    child = await startChild(ENTRY, env());
    // Kill it while it is appending leaves and signing heads.
    const deadline = Date.now() + 30_000;
    while ((await readTreeState(knex)).treeSize < 200 || !(await latestHead(knex))) {
      if (Date.now() > deadline) throw new Error(`the notary did not get going: ${child.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await child.kill();
    const atKill = await readTreeState(knex);
    child = await startChild(ENTRY, env());
    await new Promise((resolve) => setTimeout(resolve, 500));
    appending = false;
    await writer;
    const size = await treeCaughtUp(knex, store);
    expect(size).to.be.greaterThan(atKill.treeSize);

    // Every event of the log exactly once, in its order, no gap.
    const logIds: string[] = [];
    let after;
    for (;;) {
      const page = await storedEvents(store).readAll({ after, maxCount: 1000 });
      if (page.length === 0) break;
      logIds.push(...page.map((e) => e.id));
      after = page.at(-1)!.position;
    }
    const { rows } = await knex.raw<{ rows: Array<{ leaf_index: string; event_id: string }> }>('SELECT leaf_index::text, event_id::text FROM audit_leaves ORDER BY audit_leaves.leaf_index');
    expect(rows.map((r) => Number(r.leaf_index))).to.deep.equal(rows.map((_, i) => i));
    expect(rows.map((r) => r.event_id)).to.deep.equal(logIds.slice(0, rows.length));
    expect(rows.length).to.be.at.least(logIds.length - 1); // at most the newest head event still on its way

    // Heads before and after the kill: each consistent with the one before it.
    const deadlineHead = Date.now() + 10_000;
    while ((await latestHead(knex))!.tree_size < atKill.treeSize + 1) {
      if (Date.now() > deadlineHead) throw new Error('no head after the restart');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const heads = await headsBetween(knex, 1, 2_000_000_000);
    expect(heads.length).to.be.greaterThan(1);
    const nodes = new PostgresNodeStore(knex);
    for (let i = 1; i < heads.length; i++) {
      const [older, newer] = [heads[i - 1]!, heads[i]!];
      const proof = await consistencyProof(nodes, older.tree_size, newer.tree_size);
      expect(verifyConsistency(older.tree_size, newer.tree_size, fromHex(older.root_hash), fromHex(newer.root_hash), proof), `head ${older.head} -> ${newer.head}`).to.equal(true);
    }
    await child.kill();
    child = null;
    const { code, out } = await exportAndVerify(knex, url);
    expect(code, out.join('\n')).to.equal(0);
  });
});
