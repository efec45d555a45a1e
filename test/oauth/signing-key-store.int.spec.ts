// The SigningKeyStore contract, run against the PostgreSQL adapter (real database, the OAuth
// migration applied directly) and the in-memory one; plus encryption at rest as stored.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createKnex } from '../../shared/db/knex.js';
import { InMemorySigningKeyStore } from '../../shared/oauth/in-memory-signing-key-store.js';
import { KeyEncryptionKeyError } from '../../shared/oauth/key-encryption-key.js';
import { migration } from '../../shared/db/migrations/005_oauth_signing_keys.js';
import { PostgresSigningKeyStore } from '../../shared/oauth/postgres-signing-key-store.js';
import {
  SigningKeyRotationConflict,
  SigningKeys,
  generateSigningKey,
  publishedJwks,
  unsealSigningKey,
  type SigningKeyRecord,
  type SigningKeyStore,
} from '../../shared/oauth/signing-keys.js';
import { localKeySet, mintAccessToken, verifyAccessToken } from '../../shared/oauth/tokens.js';
import { freshDatabase } from '../support/database.js';
import { FAMILY_ID, ISSUER } from './oauth-fixtures.js';

const T0 = new Date('2025-06-01T10:00:00.000Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
const kek = randomBytes(32);

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
}

function contract(name: string, makeStore: () => Promise<SigningKeyStore>) {
  describe(`signing key store contract: ${name}`, function () {
    this.timeout(60_000);
    let store: SigningKeyStore;
    let keyA: SigningKeyRecord;
    let keyB: SigningKeyRecord;
    let keyC: SigningKeyRecord;

    before(async () => {
      [keyA, keyB, keyC] = await Promise.all([1, 2, 3].map(async () => (await generateSigningKey(kek, T0)).record)) as [SigningKeyRecord, SigningKeyRecord, SigningKeyRecord];
    });

    beforeEach(async () => {
      store = await makeStore();
    });

    it('starts empty', async () => {
      expect(await store.current()).to.equal(null);
      expect(await store.published(T0)).to.deep.equal([]);
    });

    it('stores the first key and reads it back intact', async () => {
      const current = await store.insertFirst(keyA);
      expect(current.kid).to.equal(keyA.kid);
      const read = (await store.current())!;
      expect(read).to.deep.equal(keyA);
      expect((await unsealSigningKey(read, kek)).kid).to.equal(keyA.kid);
    });

    it('keeps the first key when a second process inserts its own', async () => {
      await store.insertFirst(keyA);
      const current = await store.insertFirst(keyB);
      expect(current.kid).to.equal(keyA.kid);
      expect((await store.published(T0)).map((r) => r.kid)).to.deep.equal([keyA.kid]);
    });

    it('rotates: the new key is current, the old one published until retireAfter, then deleted', async () => {
      await store.insertFirst(keyA);
      await store.rotate(keyA.kid, keyB, at(10), at(1000));
      expect((await store.current())!.kid).to.equal(keyB.kid);
      const published = await store.published(at(10));
      expect(published.map((r) => r.kid)).to.deep.equal([keyB.kid, keyA.kid]);
      expect(published[1]!.rotatedAt).to.deep.equal(at(10));
      expect(published[1]!.retireAfter).to.deep.equal(at(1000));
      expect((await store.published(at(999))).map((r) => r.kid)).to.deep.equal([keyB.kid, keyA.kid]);
      expect((await store.published(at(1000))).map((r) => r.kid)).to.deep.equal([keyB.kid]);
      expect(await store.deleteRetired(at(999))).to.equal(0);
      expect(await store.deleteRetired(at(1000))).to.equal(1);
      expect(await store.deleteRetired(at(5000))).to.equal(0);
    });

    it('lists the current key first, then rotated keys newest first', async () => {
      await store.insertFirst(keyA);
      await store.rotate(keyA.kid, keyB, at(10), at(1000));
      await store.rotate(keyB.kid, keyC, at(20), at(1000));
      expect((await store.published(at(30))).map((r) => r.kid)).to.deep.equal([keyC.kid, keyB.kid, keyA.kid]);
    });

    it('refuses a rotation from a key that is no longer current', async () => {
      await store.insertFirst(keyA);
      await store.rotate(keyA.kid, keyB, at(10), at(1000));
      expect(await failure(store.rotate(keyA.kid, keyC, at(20), at(1000)))).to.be.instanceOf(SigningKeyRotationConflict);
      expect((await store.current())!.kid).to.equal(keyB.kid);
    });

    it('two concurrent rotations: exactly one wins', async () => {
      await store.insertFirst(keyA);
      const results = await Promise.allSettled([store.rotate(keyA.kid, keyB, at(10), at(1000)), store.rotate(keyA.kid, keyC, at(10), at(1000))]);
      expect(results.filter((r) => r.status === 'fulfilled')).to.have.length(1);
      const rejected = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')!;
      expect(rejected.reason).to.be.instanceOf(SigningKeyRotationConflict);
      expect(await store.published(at(10))).to.have.length(2);
    });

    it('serves signing and a JWKS that verifies what it signed, across a rotation', async () => {
      const keys = new SigningKeys(store, kek, { maxTokenLifetimeSeconds: 900 });
      const claims = { issuer: ISSUER, audience: ISSUER, subject: '1', clientId: `svc_${'a'.repeat(32)}`, scopes: ['openid'], familyId: FAMILY_ID, now: T0 };
      const first = await mintAccessToken(await keys.current(T0), claims);
      await keys.rotate(T0);
      const second = await mintAccessToken(await keys.current(T0), claims);
      const jwks = await publishedJwks(store, T0);
      expect(jwks.keys).to.have.length(2);
      for (const key of jwks.keys) expect(Object.keys(key).sort()).to.deep.equal(['alg', 'e', 'kid', 'kty', 'n', 'use']);
      for (const { token } of [first, second]) {
        expect((await verifyAccessToken(token, localKeySet(jwks), { issuer: ISSUER, audience: ISSUER, now: T0 })).sub).to.equal('1');
      }
    });
  });
}

contract('in memory', async () => new InMemorySigningKeyStore());

describe('PostgreSQL signing key store', function () {
  this.timeout(60_000);
  let url = '';
  const pools: pg.Pool[] = [];

  before(async () => {
    url = await freshDatabase('oauth_signing_keys');
  });

  after(async () => {
    await Promise.all(pools.map((p) => p.end()));
  });

  /** Each store gets a fresh table: drop and migrate again (down and up both run). */
  async function freshStore(): Promise<{ store: PostgresSigningKeyStore; pool: pg.Pool }> {
    const knex = createKnex(url);
    try {
      await migration.down(knex);
      await migration.up(knex);
    } finally {
      await knex.destroy();
    }
    const pool = new pg.Pool({ connectionString: url, max: 4 });
    pools.push(pool);
    return { store: new PostgresSigningKeyStore(pool), pool };
  }

  contract('PostgreSQL', async () => (await freshStore()).store);

  describe('encryption at rest', () => {
    it('stores no private key material in clear, only the sealed PKCS#8', async () => {
      const { store, pool } = await freshStore();
      const keys = new SigningKeys(store, kek, { maxTokenLifetimeSeconds: 900 });
      await keys.current(T0);
      const { rows } = await pool.query<Record<string, unknown>>('SELECT * FROM oauth_signing_keys');
      expect(rows).to.have.length(1);
      const dump = JSON.stringify(rows, (_k, v) => (v && v.type === 'Buffer' ? Buffer.from(v.data).toString('latin1') : v));
      expect(dump).to.not.match(/PRIVATE KEY|"d":|"p":|"q":/);
      expect(Object.keys(rows[0]!.public_jwk as object).sort()).to.deep.equal(['alg', 'e', 'kid', 'kty', 'n', 'use']);
    });

    it('refuses a tampered ciphertext, a swapped row and a wrong KEK', async () => {
      const { store, pool } = await freshStore();
      const keys = new SigningKeys(store, kek, { maxTokenLifetimeSeconds: 900 });
      await keys.current(T0);
      const { kid: second } = await keys.rotate(T0);
      const first = (await store.published(T0)).find((r) => r.kid !== second)!.kid;

      // Another process with the wrong KEK cannot sign.
      expect(await failure(new SigningKeys(store, randomBytes(32), { maxTokenLifetimeSeconds: 900 }).current(T0))).to.be.instanceOf(KeyEncryptionKeyError);

      // A sealed key copied onto another row does not open (the kid is authenticated data).
      await pool.query(
        `UPDATE oauth_signing_keys AS t SET private_key_iv = s.private_key_iv, private_key_ciphertext = s.private_key_ciphertext, private_key_tag = s.private_key_tag
         FROM oauth_signing_keys AS s WHERE t.kid = $1 AND s.kid = $2`,
        [second, first],
      );
      expect(await failure(new SigningKeys(store, kek, { maxTokenLifetimeSeconds: 900 }).current(T0))).to.be.instanceOf(KeyEncryptionKeyError);

      // A flipped bit in a ciphertext fails authentication.
      await pool.query("UPDATE oauth_signing_keys SET private_key_ciphertext = set_byte(private_key_ciphertext, 0, get_byte(private_key_ciphertext, 0) # 1) WHERE kid = $1", [first]);
      const tampered = (await store.published(T0)).find((r) => r.kid === first)!;
      expect(await failure(unsealSigningKey(tampered, kek))).to.be.instanceOf(KeyEncryptionKeyError);
    });

    it('the database itself allows only one current key', async () => {
      const { store, pool } = await freshStore();
      await store.insertFirst((await generateSigningKey(kek, T0)).record);
      const other = (await generateSigningKey(kek, T0)).record;
      const error = await failure(
        pool.query(
          `INSERT INTO oauth_signing_keys (kid, alg, public_jwk, kek_id, private_key_iv, private_key_ciphertext, private_key_tag, created_at)
           VALUES ($1, 'RS256', $2, $3, $4, $5, $6, now())`,
          [other.kid, JSON.stringify(other.publicJwk), other.privateKey.kekId, other.privateKey.iv, other.privateKey.ciphertext, other.privateKey.tag],
        ),
      );
      expect((error as { code?: string }).code).to.equal('23505');
    });

    it('two processes starting at once share one first key', async () => {
      const { store } = await freshStore();
      const [a, b] = await Promise.all([
        new SigningKeys(store, kek, { maxTokenLifetimeSeconds: 900 }).current(T0),
        new SigningKeys(store, kek, { maxTokenLifetimeSeconds: 900 }).current(T0),
      ]);
      expect(a.kid).to.equal(b.kid);
      expect(await store.published(T0)).to.have.length(1);
    });
  });
});
