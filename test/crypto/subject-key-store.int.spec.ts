// Subject keys and the contact search key on real PostgreSQL (migration 010): stored only wrapped
// by the data KEK ring, legacy clear rows still read and then wrapped by rewrapAll(), rotation to a
// new KEK, erasure, and one search key however many processes create it at once.
import { expect } from 'chai';
import { randomBytes, randomUUID } from 'node:crypto';
import type { Knex } from '../../shared/db/knex.js';
import { PostgresSubjectKeyStore } from '../../shared/crypto/postgres-subject-key-store.js';
import { DataKeyRing, DataKeyRingError, dataKekId } from '../../shared/crypto/data-key-ring.js';
import { loadContactHasher } from '../../shared/crypto/postgres-contact-search-key.js';
import { migratedDatabase } from '../support/database.js';
import { TEST_DATA_KEK, testDataKeyRing } from '../support/data-kek.js';

interface Row {
  key_id: string;
  subject_id: string;
  key: Buffer | null;
  kek_id: string | null;
  wrapped_key: Buffer | null;
}

async function allRows(knex: Knex): Promise<Row[]> {
  const { rows } = await knex.raw<{ rows: Row[] }>('SELECT * FROM subject_keys ORDER BY key_id');
  return rows;
}

/** Inserts keys the way the store did before migration 010: in the clear. */
async function insertLegacy(knex: Knex, count: number, subjectId = randomUUID()): Promise<Map<string, Buffer>> {
  const keys = new Map(Array.from({ length: count }, () => [randomUUID(), randomBytes(32)] as const));
  await knex.raw('INSERT INTO subject_keys (key_id, subject_id, key) SELECT k, ?, v FROM unnest(?::text[], ?::bytea[]) AS t(k, v)', [
    subjectId,
    [...keys.keys()],
    [...keys.values()],
  ]);
  return keys;
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: Error) => error,
  );
}

describe('PostgreSQL subject keys wrapped by the data KEK', function () {
  this.timeout(60_000);
  let knex: Knex;
  const oldKek = Buffer.alloc(32, 7);

  beforeEach(async () => {
    ({ knex } = await migratedDatabase('subject_keys', { max: 10 }));
  });
  afterEach(async () => knex?.destroy());

  it('creates many keys with one write, in order, each for its subject, and another process reads them', async () => {
    const store = new PostgresSubjectKeyStore(knex, testDataKeyRing());
    const subjects = Array.from({ length: 1500 }, (_, i) => `member-${i}:${i % 2 ? 'contact' : 'name'}`);
    const created = await store.createMany(subjects);
    expect(created).to.have.length(subjects.length);
    const rows = new Map((await allRows(knex)).map((row) => [row.key_id, row]));
    created.forEach((key, i) => {
      expect(rows.get(key.keyId)).to.deep.include({ subject_id: subjects[i], key: null });
      expect(rows.get(key.keyId)!.wrapped_key!.includes(key.key)).to.equal(false);
    });
    // Another process (no recent keys of its own) unwraps the same keys, and erasure destroys them.
    const other = new PostgresSubjectKeyStore(knex, testDataKeyRing());
    const read = await other.getMany(created.map((k) => k.keyId));
    expect(created.every((k) => read.get(k.keyId)?.equals(k.key))).to.equal(true);
    await other.destroy(subjects[0]!);
    expect((await other.getMany([created[0]!.keyId, created[1]!.keyId])).size).to.equal(1);
    expect(await store.createMany([])).to.deep.equal([]);
  });

  it('stores new keys only wrapped: the key bytes appear nowhere in the table', async () => {
    const store = new PostgresSubjectKeyStore(knex, testDataKeyRing());
    const created = [await store.create('user-1'), await store.create('user-1'), await store.createForNewSubject()];
    const rows = await allRows(knex);
    expect(rows.length).to.be.at.least(created.length); // plus the block of keys kept ready
    for (const row of rows) {
      expect(row.key).to.equal(null);
      expect(row.kek_id).to.equal(dataKekId(TEST_DATA_KEK));
      expect(row.wrapped_key).to.be.instanceOf(Buffer);
    }
    const dump = JSON.stringify(rows.map((r) => Object.values(r).map((v) => (Buffer.isBuffer(v) ? v.toString('hex') : String(v)))));
    for (const { key } of created) {
      expect(dump).not.to.include(key.toString('hex'));
      for (const row of rows) expect(row.wrapped_key!.includes(key)).to.equal(false);
    }
    // Another store (nothing remembered) unwraps them.
    const found = await new PostgresSubjectKeyStore(knex, testDataKeyRing()).getMany(created.map((k) => k.keyId));
    for (const { keyId, key } of created) expect(found.get(keyId)?.equals(key), keyId).to.equal(true);
  });

  it('refuses a row that is both legacy and wrapped, or neither', async () => {
    const both = knex.raw("INSERT INTO subject_keys (key_id, subject_id, key, kek_id, wrapped_key) VALUES ('a', 's', ?, 'k', ?)", [randomBytes(32), randomBytes(60)]);
    expect((await rejection(both)).message).to.include('subject_keys_wrapped_or_legacy');
    const neither = knex.raw("INSERT INTO subject_keys (key_id, subject_id) VALUES ('b', 's')");
    expect((await rejection(neither)).message).to.include('subject_keys_wrapped_or_legacy');
    const half = knex.raw("INSERT INTO subject_keys (key_id, subject_id, kek_id) VALUES ('c', 's', 'k')");
    expect((await rejection(half)).message).to.include('subject_keys_wrapped_or_legacy');
  });

  it('reads legacy rows in the clear, then rewrapAll wraps them in batches and leaves no clear key', async () => {
    const legacy = await insertLegacy(knex, 2_345);
    const store = new PostgresSubjectKeyStore(knex, testDataKeyRing());
    const before = await store.getMany([...legacy.keys()]);
    expect(before.size).to.equal(legacy.size);
    for (const [keyId, key] of legacy) expect(before.get(keyId)!.equals(key)).to.equal(true);

    expect(await store.rewrapAll()).to.deep.equal({ rewrapped: legacy.size });
    const rows = await allRows(knex);
    expect(rows).to.have.length(legacy.size);
    expect(rows.every((r) => r.key === null && r.kek_id === dataKekId(TEST_DATA_KEK))).to.equal(true);
    const after = await new PostgresSubjectKeyStore(knex, testDataKeyRing()).getMany([...legacy.keys()]);
    for (const [keyId, key] of legacy) expect(after.get(keyId)!.equals(key)).to.equal(true);
    // Idempotent: nothing left.
    expect(await store.rewrapAll()).to.deep.equal({ rewrapped: 0 });
  });

  it('rotates to a new KEK: the previous one still reads, rewrapAll moves every key and the search key', async () => {
    const oldRing = new DataKeyRing(oldKek);
    const oldStore = new PostgresSubjectKeyStore(knex, oldRing);
    const created = await Promise.all(Array.from({ length: 5 }, (_, i) => oldStore.create(`subject-${i}`)));
    const legacy = await insertLegacy(knex, 3);
    const hasher = await loadContactHasher(knex, oldRing);
    const total = (await allRows(knex)).length;

    const ring = testDataKeyRing([oldKek]);
    const store = new PostgresSubjectKeyStore(knex, ring);
    const ids = [...created.map((k) => k.keyId), ...legacy.keys()];
    expect((await store.getMany(ids)).size).to.equal(ids.length);

    expect(await store.rewrapAll()).to.deep.equal({ rewrapped: total + 1 }); // every row, and the search key
    const rows = await allRows(knex);
    expect(new Set(rows.map((r) => r.kek_id))).to.deep.equal(new Set([ring.currentKekId]));

    // The old KEK can now be retired: the new one alone opens everything.
    const newOnly = testDataKeyRing();
    const found = await new PostgresSubjectKeyStore(knex, newOnly).getMany(ids);
    for (const { keyId, key } of created) expect(found.get(keyId)!.equals(key)).to.equal(true);
    for (const [keyId, key] of legacy) expect(found.get(keyId)!.equals(key)).to.equal(true);
    expect((await loadContactHasher(knex, newOnly)).hash('email', 'Guest@Example.com')).to.equal(hasher.hash('email', 'guest@example.com'));
    expect(await new PostgresSubjectKeyStore(knex, newOnly).rewrapAll()).to.deep.equal({ rewrapped: 0 });

    // And the old KEK alone opens nothing, loudly: never an "absent" (erased) key.
    const error = await rejection(new PostgresSubjectKeyStore(knex, oldRing).getMany([created[0]!.keyId]));
    expect(error).to.be.instanceOf(DataKeyRingError);
    expect(error.message).to.include(ring.currentKekId);
    expect(await rejection(loadContactHasher(knex, oldRing))).to.be.instanceOf(DataKeyRingError);
  });

  it('stops rewrapAll loudly on a key under a KEK the ring does not hold, changing nothing', async () => {
    const foreign = new PostgresSubjectKeyStore(knex, new DataKeyRing(oldKek));
    const key = await foreign.create('subject');
    const store = new PostgresSubjectKeyStore(knex, testDataKeyRing());
    const error = await rejection(store.rewrapAll());
    expect(error).to.be.instanceOf(DataKeyRingError);
    expect(error.message).to.include(dataKekId(oldKek)).and.not.to.include(key.key.toString('hex'));
    const row = (await allRows(knex)).find((r) => r.key_id === key.keyId)!;
    expect(row.kek_id).to.equal(dataKekId(oldKek));
  });

  it('destroys every key of a subject, wrapped or legacy', async () => {
    const store = new PostgresSubjectKeyStore(knex, testDataKeyRing());
    const subjectId = randomUUID();
    const wrapped = [await store.create(subjectId), await store.create(subjectId)];
    const legacy = await insertLegacy(knex, 2, subjectId);
    const kept = await store.create('someone-else');
    await store.destroy(subjectId);
    const { rows } = await knex.raw<{ rows: unknown[] }>('SELECT 1 FROM subject_keys WHERE subject_id = ?', [subjectId]);
    expect(rows).to.have.length(0);
    const found = await new PostgresSubjectKeyStore(knex, testDataKeyRing()).getMany([...wrapped.map((k) => k.keyId), ...legacy.keys(), kept.keyId]);
    expect([...found.keys()]).to.deep.equal([kept.keyId]);
  });

  it('creates one contact search key under concurrency: ten parallel loads give one key', async () => {
    const hashers = await Promise.all(Array.from({ length: 10 }, () => loadContactHasher(knex, testDataKeyRing())));
    const { rows } = await knex.raw<{ rows: Array<{ kek_id: string; wrapped_key: Buffer }> }>('SELECT * FROM contact_search_key');
    expect(rows).to.have.length(1);
    expect(rows[0]!.kek_id).to.equal(dataKekId(TEST_DATA_KEK));
    const hashes = new Set(hashers.map((h) => h.hash('phone', '+44 20 7946 0012')));
    expect(hashes.size).to.equal(1);
    // A later load reads the same key.
    expect((await loadContactHasher(knex, testDataKeyRing())).hash('phone', '+442079460012')).to.equal([...hashes][0]);
  });
});
