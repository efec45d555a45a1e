// The embedded PostgreSQL as root: the server runs as the `postgres` user, which cannot enter a
// private folder (a clone under /root, a `mktemp -d` folder, mode 700). Binaries there are copied
// to a folder it can reach; a data folder there stops the start at once with one line naming the
// closed folder and the fix. And a server that cannot start never leaves its caller waiting.
import { expect } from 'chai';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { chmod, cp, mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import pg from 'pg';
import { EmbeddedPostgresError, startEmbeddedPostgres } from '../../shared/db/embedded-postgres.js';

const isRoot = process.getuid?.() === 0;
const packagedNative = () => {
  const require = createRequire(createRequire(import.meta.url).resolve('embedded-postgres'));
  return path.resolve(path.dirname(require.resolve(`@embedded-postgres/${process.platform}-${process.arch}`)), '..', 'native');
};

describe('the embedded PostgreSQL server', function () {
  this.timeout(120_000);
  let root: string;

  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'guestpass-embedded-pg-'));
    await chmod(root, 0o755);
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('as root, runs binaries kept in a folder closed to the postgres user from a copy it can reach', async function () {
    if (!isRoot) this.skip();
    // A checkout in a `mktemp -d` folder: mode 700.
    const closed = path.join(root, 'closed');
    await mkdir(closed, { mode: 0o700 });
    const nativeDir = path.join(closed, 'native');
    await cp(packagedNative(), nativeDir, { recursive: true, verbatimSymlinks: true });
    const cache = path.join(root, 'cache');
    await mkdir(cache, { mode: 0o755 });

    const server = await startEmbeddedPostgres({ dataDir: path.join(root, 'data', 'pg'), persistent: false, nativeDir, binaryCacheDir: cache });
    try {
      const client = new pg.Client({ connectionString: server.url });
      await client.connect();
      const { rows } = await client.query<{ user: string }>('select current_user as user');
      await client.end();
      expect(rows[0]?.user).to.equal('postgres');
    } finally {
      await server.stop();
    }
    const entries = await readdir(cache);
    expect(entries, 'one copy, named after its version').to.have.length(1);
    const copy = await stat(path.join(cache, entries[0]!));
    expect(copy.uid, "the copy is root's").to.equal(0);
    expect(copy.mode & 0o777).to.equal(0o755);
  });

  it('as root, stops at once with one line naming the closed folder and the fix when the data folder is out of reach', async function () {
    if (!isRoot) this.skip();
    const closed = path.join(root, 'checkout');
    await mkdir(closed, { mode: 0o700 });
    const started = Date.now();
    const error = await startEmbeddedPostgres({ dataDir: path.join(closed, 'var', 'pg') }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(EmbeddedPostgresError);
    const message = (error as Error).message;
    expect(message).not.to.include('\n');
    expect(message).to.include(`${closed} is closed to it (mode 700)`);
    expect(message).to.include(`chmod o+x ${closed}`);
    expect(message).to.include('GUESTPASS_DATA_DIR');
    expect(message).to.include('DATABASE_URL');
    expect(Date.now() - started).to.be.below(10_000);
  });

  it('rejects, never hangs, when its binaries cannot run', async () => {
    const nativeDir = path.join(root, 'broken', 'native');
    await mkdir(path.join(nativeDir, 'bin'), { recursive: true });
    for (const name of ['postgres', 'initdb']) await writeFile(path.join(nativeDir, 'bin', name), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
    const cache = path.join(root, 'cache');
    await mkdir(cache, { mode: 0o755 });
    const started = Date.now();
    const error = await startEmbeddedPostgres({ dataDir: path.join(root, 'data', 'pg'), nativeDir, binaryCacheDir: cache }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(EmbeddedPostgresError);
    expect((error as Error).message).not.to.include('\n');
    expect((error as Error).message).to.include('DATABASE_URL');
    expect(Date.now() - started).to.be.below(10_000);
  });
});
