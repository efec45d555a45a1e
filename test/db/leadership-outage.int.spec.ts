// The leadership lock through a database outage, on a PostgreSQL of this suite's own (the shared
// server is never stopped): the active holder's session ends when the server stops (a fast
// shutdown) or is killed, its work is stopped, and the role, without ending anything but that
// work, asks again with backoff while the server is down and takes the lock and starts the work
// again once it is back. With two processes' roles (a door-gateway and its standby, two
// projections processes) exactly one holds it afterwards.
import { expect } from 'chai';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { createKnex } from '../../shared/db/knex.js';
import { freePort, startEmbeddedPostgres, type EmbeddedServer } from '../../shared/db/embedded-postgres.js';
import { runWhileLeader, type LeaderRole } from '../../shared/db/leadership-lock.js';
import { capturedLogger } from '../support/captured-logs.js';
import { eventually, sleep } from '../door/fixtures.js';

const KEY = 535_353;

describe('leadership lock through a PostgreSQL outage (a private server)', function () {
  this.timeout(120_000);
  let dir: string;
  let port: number;
  let server: EmbeddedServer | null = null;
  const knexes: Knex[] = [];
  const roles: LeaderRole[] = [];

  const startServer = async () => {
    // A killed postmaster's backends end within moments; until then a new one refuses to start.
    for (let attempt = 1; ; attempt++) {
      try {
        server = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg'), port, persistent: true });
        return;
      } catch (error) {
        if (attempt >= 10) throw error;
        await sleep(1000);
      }
    }
  };
  const stopServer = async () => {
    await server?.stop();
    server = null;
  };
  const killServer = async () => {
    const pid = Number((await readFile(path.join(dir, 'pg', 'postmaster.pid'), 'utf8')).split('\n')[0]);
    process.kill(pid, 'SIGKILL');
    await eventually(() => expect(() => process.kill(pid, 0), `postmaster ${pid} still alive`).to.throw(), 10_000, 50);
    server = null;
  };
  const url = () => `postgres://postgres:postgres@127.0.0.1:${port}/postgres`;

  before(async function () {
    this.timeout(180_000);
    dir = await mkdtemp(path.join(os.tmpdir(), 'guestpass-leadership-outage-'));
    port = await freePort();
    await startServer();
  });
  afterEach(async () => {
    for (const role of roles.splice(0)) await role.stop();
    for (const knex of knexes.splice(0)) await knex.destroy().catch(() => undefined);
  });
  after(async () => {
    await stopServer().catch(() => undefined);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Who holds the lock, as the server sees it: the application names of the sessions granted it. */
  async function holders(key: number): Promise<string[]> {
    const admin = createKnex(url(), { max: 1 });
    try {
      const { rows } = await admin.raw<{ rows: Array<{ application_name: string }> }>(
        `SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
         WHERE l.locktype = 'advisory' AND l.granted AND l.classid = 0 AND l.objid = ? AND l.objsubid = 1`,
        [key],
      );
      return rows.map((r) => r.application_name);
    } finally {
      await admin.destroy();
    }
  }

  /** A role whose work records when it starts and stops (the lost and regained callbacks). */
  function role(name: string, key: number, log: string[], logger = capturedLogger().logger): LeaderRole {
    const knex = createKnex(url(), { max: 2 });
    knexes.push(knex);
    const r = runWhileLeader({
      knex,
      key,
      holder: 'outage test',
      logger,
      pollMs: 100,
      maxRetryMs: 400,
      start: async () => {
        log.push(`${name} started`);
        return async () => void log.push(`${name} stopped`);
      },
    });
    roles.push(r);
    return r;
  }

  it('stopped for a while and started again: the holder stops its work, asks again with backoff, and takes the lock back', async () => {
    const log: string[] = [];
    const captured = capturedLogger();
    const holder = role('a', KEY, log, captured.logger);
    await eventually(() => expect(log).to.deep.equal(['a started']));
    expect(holder.active).to.equal(true);
    expect(await holders(KEY)).to.deep.equal(['guestpass outage test lock']);

    await stopServer();
    await eventually(() => expect(log).to.deep.equal(['a started', 'a stopped']), 10_000);
    expect(holder.active, 'active while the database is down').to.equal(false);
    await sleep(2000); // several attempts fail meanwhile
    expect(log, 'work started while the database is down').to.deep.equal(['a started', 'a stopped']);

    await startServer();
    await eventually(() => expect(log).to.deep.equal(['a started', 'a stopped', 'a started']), 20_000);
    expect(holder.active).to.equal(true);
    expect(await holders(KEY), 'the lock on the restarted server').to.deep.equal(['guestpass outage test lock']);
    // One warning for the outage, not one per attempt; the loss itself is told once.
    const text = captured.text();
    expect(text.match(/"msg":"cannot ask for the outage test lock/g) ?? [], 'warnings while the database was down').to.have.length(1);
    expect(text.match(/"msg":"lost the outage test lock/g) ?? []).to.have.length(1);
  });

  it('killed (SIGKILL) and started with two roles: the work stops, never runs twice at once, and afterwards exactly one of them runs it', async () => {
    const log: string[] = [];
    const a = role('a', KEY + 1, log);
    const b = role('b', KEY + 1, log);
    /** Who runs the work after each entry of the log; fails when two would at once. */
    const running = () => {
      const now = new Set<string>();
      for (const entry of log) {
        const [name, what] = entry.split(' ') as [string, string];
        if (what === 'started') {
          expect([...now], `${entry} while another runs (${log.join(', ')})`).to.deep.equal([]);
          now.add(name);
        } else now.delete(name);
      }
      return [...now];
    };
    await eventually(() => expect(running()).to.have.length(1));

    await killServer();
    // The standby's session may outlive the holder's by a moment on the dying server and take the
    // lock there: then its work starts, and stops with its session.
    await eventually(() => expect(running(), 'work running while the database is down').to.deep.equal([]), 10_000);
    expect([a.active, b.active]).to.deep.equal([false, false]);
    const stoppedAt = log.length;

    await startServer();
    await eventually(() => expect(running()).to.have.length(1), 30_000);
    await sleep(1000); // both have asked again several times by now
    expect(log.length, 'the work after the restart').to.equal(stoppedAt + 1);
    expect(running()).to.have.length(1);
    expect([a.active, b.active].filter(Boolean), 'roles active at once').to.have.length(1);
    expect(await holders(KEY + 1)).to.deep.equal(['guestpass outage test lock']);
  });
});
