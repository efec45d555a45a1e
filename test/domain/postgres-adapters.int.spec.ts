// The PostgreSQL id allocator and subject key store (migration 002).
import { expect } from 'chai';
import { createKnex, type Knex } from '../../shared/db/knex.js';
import { migrateToLatest } from '../../shared/db/migrate.js';
import { PostgresIdAllocator } from '../../shared/domain/postgres-id-allocator.js';
import { PostgresSubjectKeyStore } from '../../shared/crypto/postgres-subject-key-store.js';
import { testDataKeyRing } from '../support/data-kek.js';
import { open, seal } from '../../shared/crypto/sealed-box.js';
import { freshDatabase } from '../support/database.js';

describe('PostgreSQL id allocator and subject key store', function () {
  this.timeout(60_000);
  let knex: Knex;

  before(async () => {
    knex = createKnex(await freshDatabase('adapters'));
    await migrateToLatest(knex);
  });

  after(async () => knex?.destroy());

  describe('id allocator', () => {
    it('hands out ascending ids per kind, starting at 1', async () => {
      const ids = new PostgresIdAllocator(knex);
      expect(await ids.next('organization')).to.deep.equal([1]);
      expect(await ids.next('organization', 3)).to.deep.equal([2, 3, 4]);
      expect(await ids.next('facility', 2)).to.deep.equal([1, 2]);
    });

    it('never hands out an id twice under concurrency, across allocators', async () => {
      const [a, b] = [new PostgresIdAllocator(knex), new PostgresIdAllocator(knex)];
      const batches = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).next('pass', 10)));
      const all = batches.flat();
      expect(all).to.have.length(400);
      expect(new Set(all).size).to.equal(400);
      for (const batch of batches) expect([...batch].sort((x, y) => x - y)).to.deep.equal(batch);
    });

    it('serves a kind with a block from ids drawn ahead: ascending, never twice, across allocators', async () => {
      const [a, b] = [new PostgresIdAllocator(knex, { blockSizes: { invitation: 8 } }), new PostgresIdAllocator(knex, { blockSizes: { invitation: 8 } })];
      const batches = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? a : b).next('invitation', 1 + (i % 3))));
      const all = batches.flat();
      expect(all).to.have.length(60);
      expect(new Set(all).size).to.equal(60);
      for (const batch of batches) expect([...batch].sort((x, y) => x - y)).to.deep.equal(batch);
      // One allocator's ids keep ascending from call to call.
      const own = [...(await a.next('invitation', 5)), ...(await a.next('invitation', 5))];
      expect([...own].sort((x, y) => x - y)).to.deep.equal(own);
      // Other kinds stay dense.
      const [org] = await a.next('organization');
      expect(await a.next('organization')).to.deep.equal([org! + 1]);
    });

    it('refuses a count outside 1..1000', async () => {
      const ids = new PostgresIdAllocator(knex);
      for (const count of [0, -1, 1.5, 1001]) {
        let error: unknown;
        await ids.next('user', count).catch((e: unknown) => (error = e));
        expect(error, `count ${count}`).to.be.instanceOf(RangeError);
      }
    });
  });

  describe('subject key store', () => {
    it('creates 256-bit keys and finds them by key id', async () => {
      const keys = new PostgresSubjectKeyStore(knex, testDataKeyRing());
      const a = await keys.create('batch-a');
      const b = await keys.create('batch-b');
      expect(a.key).to.have.length(32);
      expect(a.keyId).not.to.equal(b.keyId);
      const found = await keys.getMany([a.keyId, b.keyId, a.keyId, 'unknown']);
      expect([...found.keys()].sort()).to.deep.equal([a.keyId, b.keyId].sort());
      expect(found.get(a.keyId)!.equals(a.key)).to.equal(true);
      expect((await keys.getMany([])).size).to.equal(0);
    });

    it('destroys every key of a subject and only those', async () => {
      const keys = new PostgresSubjectKeyStore(knex, testDataKeyRing());
      const first = await keys.create('guest-1');
      const second = await keys.create('guest-1');
      const other = await keys.create('guest-2');
      const sealed = seal(first, { email: 'ada@example.com' });
      expect(open(((await keys.getMany([first.keyId])).get(first.keyId))!, sealed)).to.deep.equal({ email: 'ada@example.com' });

      await keys.destroy('guest-1');
      const found = await keys.getMany([first.keyId, second.keyId, other.keyId]);
      expect([...found.keys()]).to.deep.equal([other.keyId]);
      await keys.destroy('guest-1'); // idempotent
    });

    it('hands out keys for new subjects stored ahead, each once, and destroys one by its subject', async () => {
      const keys = new PostgresSubjectKeyStore(knex, testDataKeyRing());
      const made = await Promise.all(Array.from({ length: 100 }, () => keys.createForNewSubject()));
      expect(new Set(made.map((k) => k.keyId)).size).to.equal(100);
      expect(new Set(made.map((k) => k.subjectId)).size).to.equal(100);
      const stored = await new PostgresSubjectKeyStore(knex, testDataKeyRing()).getMany(made.map((k) => k.keyId));
      expect(made.every((k) => stored.get(k.keyId)?.equals(k.key))).to.equal(true); // durable before handed out

      await keys.destroy(made[0]!.subjectId);
      expect((await new PostgresSubjectKeyStore(knex, testDataKeyRing()).getMany([made[0]!.keyId])).size).to.equal(0);
      expect((await keys.getMany([made[0]!.keyId])).size).to.equal(0);
    });

    it('stores every key of a turn, and another instance (another process) reads and destroys them from the table', async () => {
      const writer = new PostgresSubjectKeyStore(knex, testDataKeyRing());
      // Created in one event-loop turn: stored by one statement; answered from memory by `writer`.
      const created = await Promise.all(['guest-3', 'guest-3', 'guest-4'].map((subject) => writer.create(subject)));
      const reader = new PostgresSubjectKeyStore(knex, testDataKeyRing());
      const found = await reader.getMany(created.map((k) => k.keyId));
      expect(created.every((k) => found.get(k.keyId)?.equals(k.key))).to.equal(true);

      await reader.destroy('guest-3');
      const left = await new PostgresSubjectKeyStore(knex, testDataKeyRing()).getMany(created.map((k) => k.keyId));
      expect([...left.keys()]).to.deep.equal([created[2]!.keyId]);
    });
  });
});
