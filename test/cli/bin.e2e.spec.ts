import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { mkdtemp, rm } from 'node:fs/promises';
import { openRuntime } from '../../runtime/runtime.js';
import { createOrganization } from '../../command-service/organizations/create-organization.js';
import { loadConfig } from '../../shared/config.js';
import { withDatabase } from '../../shared/db/embedded-postgres.js';
import { createLogger } from '../../shared/logger.js';
import { createKnex } from '../../shared/db/knex.js';
import { freshDatabase } from '../support/database.js';

// The package's bin (package.json "bin"), run as `npx guestpass` runs it: in-process tests of
// main() cannot see what the process itself does with the exit code, stdout and stray logs.
const BIN = fileURLToPath(new URL('../../bin/guestpass.js', import.meta.url));

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the bin; `onStdout` may close the pipe early, as `| head` does; `onStart` is given the process. */
function guestpass(
  env: Record<string, string>,
  args: string[],
  onStdout?: (chunk: Buffer, stdout: NodeJS.ReadableStream & { destroy(): void }) => void,
  onStart?: (child: ChildProcess) => void,
): Promise<Run> {
  return new Promise((resolve, reject) => {
    // Only what the CLI needs: a broker or event store named in the test run's own environment stays out.
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? os.tmpdir(), LOG_LEVEL: 'silent', PROJECTION_WAIT_MS: '5000', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    onStart?.(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      onStdout?.(chunk, child.stdout);
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const STACK_LINE = /\n\s+at /;

describe('npx guestpass (the bin, in its own process)', function () {
  this.timeout(120_000);
  let dataDir: string;
  let env: Record<string, string>;

  before(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'guestpass-bin-'));
    env = { DATABASE_URL: await freshDatabase('cli_bin'), GUESTPASS_DATA_DIR: dataDir };
  });
  after(() => rm(dataDir, { recursive: true, force: true }));

  it('exits 2 on a usage error, 1 on a refused request and 0 on success, as documented', async () => {
    const unknown = await guestpass(env, ['frobnicate']);
    expect(unknown.code, unknown.stderr).to.equal(2);
    expect(unknown.stderr).to.match(/unknown command "frobnicate"/);

    expect((await guestpass(env, [])).code).to.equal(2);

    const missing = await guestpass(env, ['org', 'create', '--json']);
    expect(missing.code).to.equal(2);
    expect(JSON.parse(missing.stdout)).to.deep.include({ error: 'usage' });

    const notFound = await guestpass(env, ['facility', 'create', '--org', '999999', '--name', 'Ghost', '--json']);
    expect(notFound.code, notFound.stderr).to.equal(1);
    expect(JSON.parse(notFound.stdout)).to.deep.include({ error: 'not_found' });

    const created = await guestpass(env, ['org', 'create', '--name', 'Acme', '--json']);
    expect(created.code, created.stderr).to.equal(0);
    expect(JSON.parse(created.stdout).id).to.be.a('number');
  });

  it('says in one line, without a stack trace, that the database cannot be reached (exit 1)', async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', () => resolve()));
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));

    const refused = await guestpass({ ...env, DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/guestpass` }, ['org', 'create', '--name', 'X']);
    expect(refused.code).to.equal(1);
    expect(refused.stderr.trimEnd().split('\n'), refused.stderr).to.have.length(1);
    expect(refused.stderr).to.match(new RegExp(`^guestpass: cannot connect to the database 127\\.0\\.0\\.1:${port}/guestpass: .*ECONNREFUSED`));

    const noDatabase = withDatabase(env.DATABASE_URL!, `gp_test_missing_${randomUUID().slice(0, 8)}`);
    const missing = await guestpass({ ...env, DATABASE_URL: noDatabase }, ['org', 'create', '--name', 'X', '--json']);
    expect(missing.code).to.equal(1);
    expect(missing.stderr, missing.stderr).not.to.match(STACK_LINE);
    expect(missing.stderr).to.equal('');
    const answer = JSON.parse(missing.stdout) as { error: string; message: string };
    expect(answer.error).to.equal('unavailable');
    expect(answer.message).to.match(/^cannot connect to the database .*gp_test_missing_.*does not exist/);
  });

  it('stops quietly when the reader of an export goes away (`events export | head`)', async () => {
    // Enough events that the export outgrows the pipe's buffer after the reader has left.
    const runtime = await openRuntime(loadConfig({ ...env, PROJECTION_WAIT_MS: '0' }), createLogger('silent'));
    try {
      for (let i = 0; i < 600; i++) {
        await createOrganization(
          runtime.deps,
          { name: `Organization ${i}` },
          { correlationId: randomUUID(), causationId: null, actor: { kind: 'operator' }, now: new Date() },
        );
      }
    } finally {
      await runtime.close();
    }

    const head = await guestpass(env, ['events', 'export'], (_chunk, stdout) => stdout.destroy());
    expect(head.stderr, head.stderr).to.equal('');
    expect(head.code).to.equal(0);
    expect(head.stdout.split('\n')[0]).to.match(/^\{"id":/);
  });

  it('stops a rebuild on Ctrl-C when its step under way ends, keeping its progress (exit 130), and quits at once on a second', async () => {
    expect((await guestpass(env, ['org', 'create', '--name', 'Rebuilt'])).code).to.equal(0);
    const knex = createKnex(env.DATABASE_URL!, { max: 2 });
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    /**
     * A rebuild held at its start by a lock on its progress table, given `signals` Ctrl-Cs
     * meanwhile; whether it ended within `endsWithinMs` while still held, and how it ended.
     */
    const heldRebuild = async (signals: number, endsWithinMs: number) => {
      const holder = await knex.client.acquireConnection();
      try {
        await holder.query('BEGIN');
        await holder.query('LOCK TABLE projection_rebuilds IN ACCESS EXCLUSIVE MODE');
        let child: ChildProcess | null = null;
        let ended = false;
        const run = guestpass(env, ['projections', 'rebuild'], undefined, (c) => (child = c)).finally(() => (ended = true));
        for (;;) {
          if (ended) throw new Error(`the rebuild ended before it waited: ${(await run).stderr}`);
          const { rows } = await knex.raw(`SELECT 1 FROM pg_locks WHERE NOT granted AND relation = 'projection_rebuilds'::regclass`);
          if (rows.length > 0) break;
          await sleep(50);
        }
        for (let i = 0; i < signals; i++) {
          if (i > 0) await sleep(300); // each signal handled on its own
          child!.kill('SIGINT');
        }
        const endedWhileHeld = await Promise.race([run.then(() => true), sleep(endsWithinMs).then(() => false)]);
        await holder.query('COMMIT');
        return { endedWhileHeld, result: await run };
      } finally {
        await holder.query('ROLLBACK').catch(() => undefined);
        await knex.client.releaseConnection(holder);
      }
    };
    try {
      const stopped = await heldRebuild(1, 500);
      expect(stopped.endedWhileHeld, stopped.result.stderr).to.equal(false);
      expect(stopped.result.stderr).to.include('stopping when the step under way ends');
      expect(stopped.result.stderr).to.include('guestpass: rebuild stopped; run it again to resume');
      expect(stopped.result.stderr).not.to.match(STACK_LINE);
      expect(stopped.result.code).to.equal(130);
      const kept = await knex.raw(`SELECT generation FROM projection_rebuilds WHERE name = 'organizations'`);
      expect(kept.rows, 'the stopped rebuild keeps its place').to.have.length(1);

      const again = await guestpass(env, ['projections', 'rebuild', 'organizations', '--json']);
      expect(again.code, again.stderr).to.equal(0);
      // It resumed the stopped rebuild's generation rather than starting another.
      const rebuilt = (JSON.parse(again.stdout) as { rebuilt: Array<{ name: string; generation: number; position: string }> }).rebuilt;
      expect(rebuilt).to.deep.equal([{ name: 'organizations', generation: Number(kept.rows[0].generation), position: rebuilt[0]!.position }]);

      const quit = await heldRebuild(2, 10_000);
      expect(quit.endedWhileHeld).to.equal(true);
      expect(quit.result.code).to.equal(130);
    } finally {
      await knex.destroy();
    }
  });
});
