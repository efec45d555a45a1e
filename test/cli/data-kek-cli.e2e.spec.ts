// `npx guestpass keys rotate-data-kek` and the data KEK of a runtime: the embedded default's key
// file and its rotation, DATA_KEY_ENCRYPTION_KEY with _PREVIOUS, the first start after migration
// 010 wrapping the keys stored in the clear, and a process with another KEK refused at start.
import { expect } from 'chai';
import os from 'node:os';
import path from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { main, type Io } from '../../cli/guestpass.js';
import { openRuntime } from '../../runtime/runtime.js';
import { loadConfig } from '../../shared/config.js';
import { createLogger } from '../../shared/logger.js';
import { dataKekId } from '../../shared/crypto/data-key-ring.js';
import { parseKeyEncryptionKey } from '../../shared/oauth/key-encryption-key.js';
import { createKnex } from '../../shared/db/knex.js';
import { freshDatabase, migratedDatabaseUrl } from '../support/database.js';

type Env = Record<string, string>;

async function guestpass(env: Env, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const io: Io = { out: (l) => out.push(l), err: (l) => err.push(l) };
  const code = await main(argv, io, { LOG_LEVEL: 'silent', PROJECTION_WAIT_MS: '0', ...env });
  return { code, out, err, json: () => JSON.parse(out.at(-1) ?? 'null') as Record<string, unknown> };
}

/** Creates `count` data keys through a runtime of this environment; their ids and bytes. */
async function createKeys(env: Env, count: number): Promise<Map<string, Buffer>> {
  const runtime = await openRuntime(loadConfig(env), createLogger('silent'));
  try {
    const made = await Promise.all(Array.from({ length: count }, (_, i) => runtime.deps.subjectKeys.create(`subject-${i}`)));
    return new Map(made.map((k) => [k.keyId, k.key]));
  } finally {
    await runtime.close();
  }
}

/** Asserts a runtime of this environment opens every key, and that the table holds them under `kekId` only. */
async function expectReadable(env: Env, keys: Map<string, Buffer>, kekId: string): Promise<void> {
  const runtime = await openRuntime(loadConfig(env), createLogger('silent'));
  try {
    const found = await runtime.deps.subjectKeys.getMany([...keys.keys()]);
    for (const [keyId, key] of keys) expect(found.get(keyId)?.equals(key), keyId).to.equal(true);
    const { rows } = await runtime.knex.raw<{ rows: Array<{ kek_id: string | null; key: Buffer | null }> }>(
      'SELECT kek_id, key FROM subject_keys UNION ALL SELECT kek_id, NULL FROM contact_search_key',
    );
    expect(rows.length).to.be.above(keys.size);
    for (const row of rows) expect(row).to.deep.equal({ kek_id: kekId, key: null });
  } finally {
    await runtime.close();
  }
}

describe('data key-encryption key: runtime and `keys rotate-data-kek`', function () {
  this.timeout(60_000);
  let dataDir: string;

  beforeEach(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'guestpass-data-kek-'));
  });
  afterEach(() => rm(dataDir, { recursive: true, force: true }));

  it('embedded default: generates data-kek once (0600), and rotation replaces it, rewrapping every key', async () => {
    const env = { DATABASE_URL: await freshDatabase('data_kek_embedded'), GUESTPASS_DATA_DIR: dataDir };
    const keys = await createKeys(env, 5);
    const file = path.join(dataDir, 'data-kek');
    expect((await stat(file)).mode & 0o077).to.equal(0);
    const oldId = dataKekId(parseKeyEncryptionKey(await readFile(file, 'utf8')));
    await expectReadable(env, keys, oldId);

    const rotated = await guestpass(env, 'keys', 'rotate-data-kek', '--json');
    expect(rotated.code, rotated.err.join('\n') + rotated.out.join('\n')).to.equal(0);
    const newId = dataKekId(parseKeyEncryptionKey(await readFile(file, 'utf8')));
    expect(newId).to.not.equal(oldId);
    expect(rotated.json()).to.deep.equal({ rewrapped: keys.size + 1, kek_id: newId }); // the data keys and the search key
    expect((await stat(file)).mode & 0o077).to.equal(0);
    expect(existsSync(path.join(dataDir, 'data-kek.previous'))).to.equal(false);
    await expectReadable(env, keys, newId);
  });

  it('embedded default: a rotation that stopped before its rewrap is finished by the next one', async () => {
    const env = { DATABASE_URL: await freshDatabase('data_kek_interrupted'), GUESTPASS_DATA_DIR: dataDir };
    const keys = await createKeys(env, 3);
    // As if `rotate-data-kek` had made the new key and died: the old one is data-kek.previous.
    const file = path.join(dataDir, 'data-kek');
    await writeFile(path.join(dataDir, 'data-kek.previous'), await readFile(file));
    const next = randomBytes(32);
    await writeFile(file, next.toString('hex') + '\n', { mode: 0o600 });

    const rotated = await guestpass(env, 'keys', 'rotate-data-kek', '--json');
    expect(rotated.code, rotated.out.join('\n')).to.equal(0);
    expect(rotated.json()).to.deep.equal({ rewrapped: keys.size + 1, kek_id: dataKekId(next) });
    expect(existsSync(path.join(dataDir, 'data-kek.previous'))).to.equal(false);
    await expectReadable(env, keys, dataKekId(next));
  });

  it('DATA_KEY_ENCRYPTION_KEY: rotation with the old key in _PREVIOUS, then the new key alone', async () => {
    const [oldKek, newKek] = [randomBytes(32), randomBytes(32)];
    const base = { DATABASE_URL: await freshDatabase('data_kek_env'), GUESTPASS_DATA_DIR: dataDir };
    const keys = await createKeys({ ...base, DATA_KEY_ENCRYPTION_KEY: oldKek.toString('hex') }, 4);

    const during = { ...base, DATA_KEY_ENCRYPTION_KEY: newKek.toString('base64url'), DATA_KEY_ENCRYPTION_KEY_PREVIOUS: oldKek.toString('hex') };
    const rotated = await guestpass(during, 'keys', 'rotate-data-kek', '--json');
    expect(rotated.code, rotated.out.join('\n')).to.equal(0);
    expect(rotated.json()).to.deep.equal({ rewrapped: keys.size + 1, kek_id: dataKekId(newKek) });
    expect(existsSync(path.join(dataDir, 'data-kek'))).to.equal(false); // no file with a key from the environment

    const again = await guestpass(during, 'keys', 'rotate-data-kek', '--json');
    expect(again.json()).to.deep.equal({ rewrapped: 0, kek_id: dataKekId(newKek) });
    await expectReadable({ ...base, DATA_KEY_ENCRYPTION_KEY: newKek.toString('hex') }, keys, dataKekId(newKek));

    // The retired key alone is refused at start, before it wraps anything: a config error naming the KEK in use.
    const refused = await guestpass({ ...base, DATA_KEY_ENCRYPTION_KEY: oldKek.toString('hex') }, 'keys', 'rotate-data-kek', '--json');
    expect(refused.code).to.equal(1);
    expect(refused.json().error).to.equal('config');
    expect(refused.json().message).to.include(dataKekId(newKek)).and.not.to.include(oldKek.toString('hex'));
  });

  it('the first start after migration 010 wraps the keys stored in the clear', async () => {
    const url = await migratedDatabaseUrl('data_kek_legacy');
    const legacy = new Map(Array.from({ length: 3 }, () => [randomUUID(), randomBytes(32)] as const));
    const knex = createKnex(url, { max: 1 });
    try {
      await knex.raw('INSERT INTO subject_keys (key_id, subject_id, key) SELECT k, ?, v FROM unnest(?::text[], ?::bytea[]) AS t(k, v)', [
        'legacy-subject',
        [...legacy.keys()],
        [...legacy.values()],
      ]);
    } finally {
      await knex.destroy();
    }
    const kek = randomBytes(32);
    const env = { DATABASE_URL: url, GUESTPASS_DATA_DIR: dataDir, DATA_KEY_ENCRYPTION_KEY: kek.toString('hex') };
    const runtime = await openRuntime(loadConfig(env), createLogger('silent'));
    try {
      expect(runtime.dataKeys.rewrappedOnOpen).to.equal(legacy.size);
      expect(runtime.dataKeys.ring.currentKekId).to.equal(dataKekId(kek));
      expect(runtime.contactHasher.hash('email', 'a@b.test')).to.match(/^[0-9a-f]{64}$/);
      expect(runtime.deps.contactHasher).to.equal(runtime.contactHasher);
    } finally {
      await runtime.close();
    }
    await expectReadable(env, legacy, dataKekId(kek));
  });

  it('refuses a malformed DATA_KEY_ENCRYPTION_KEY as a config error, never echoing it', async () => {
    const bad = 'x'.repeat(40);
    const result = await guestpass({ DATABASE_URL: 'postgres://127.0.0.1:1/none', GUESTPASS_DATA_DIR: dataDir, DATA_KEY_ENCRYPTION_KEY: bad }, 'keys', 'rotate-data-kek', '--json');
    expect(result.code).to.equal(1);
    expect(result.json()).to.deep.include({ error: 'config' });
    expect(result.out.join('\n')).to.include('DATA_KEY_ENCRYPTION_KEY').and.not.to.include(bad);
  });
});
