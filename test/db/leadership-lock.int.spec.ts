// The leadership lock (the active door-gateway's, the active forwarder's) when its server falls silent without the connection closing (the
// holder's network or the server's host gone, not the holder's process): the holder steps down
// on its own, and a standby gets the lock only once the server has ended the silent session.
// A proxy between the holder and PostgreSQL plays the network: it stops passing bytes, and later
// closes its side towards the server, as the server's own keepalives would.
import net from 'node:net';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { createKnex } from '../../shared/db/knex.js';
import { holdLeadershipLock, runWhileLeader, type LeaderRole } from '../../shared/db/leadership-lock.js';
import { migratedDatabaseUrl } from '../support/database.js';
import { eventually, sleep } from '../door/fixtures.js';

const KEY = 424_242;

/** A TCP proxy to `target` that can fall silent (no bytes, no closing, either way) and can close its server side. */
async function silenceableProxy(target: { host: string; port: number }) {
  const pairs: Array<{ client: net.Socket; server: net.Socket }> = [];
  let silent = false;
  const proxy = net.createServer((client) => {
    const server = net.connect(target.port, target.host);
    pairs.push({ client, server });
    client.on('data', (chunk) => void (silent || server.write(chunk)));
    server.on('data', (chunk) => void (silent || client.write(chunk)));
    // A silent network carries no closing either.
    const cut = (other: net.Socket) => () => void (silent || other.destroy());
    client.on('error', cut(server));
    server.on('error', cut(client));
    client.on('close', cut(server));
    server.on('close', cut(client));
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    port: (proxy.address() as net.AddressInfo).port,
    silence: () => void (silent = true),
    /** Ends the proxy's connections to the server only: the holder's side hears nothing. */
    endServerSide: () => {
      for (const { server } of pairs) server.destroy();
    },
    close: async () => {
      for (const { client, server } of pairs) {
        client.destroy();
        server.destroy();
      }
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    },
  };
}

describe('leadership lock (PostgreSQL)', function () {
  this.timeout(30_000);
  let url: string;
  const knexes: Knex[] = [];

  before(async () => {
    url = await migratedDatabaseUrl('leadership_lock');
  });
  after(async () => {
    for (const knex of knexes) await knex.destroy().catch(() => undefined);
  });
  const proxies: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    for (const proxy of proxies.splice(0)) await proxy.close();
  });

  /** A knex whose connections pass through a proxy the test can silence. */
  async function knexThroughProxy() {
    const target = new URL(url);
    const proxy = await silenceableProxy({ host: target.hostname, port: Number(target.port || 5432) });
    proxies.push(proxy);
    const viaProxy = new URL(url);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.port);
    const knex = createKnex(viaProxy.toString(), { max: 1 });
    knexes.push(knex);
    return { knex, proxy };
  }

  it('a holder whose server stops answering steps down before the server lets a standby in', async () => {
    const { knex: holderKnex, proxy } = await knexThroughProxy();
    const standbyKnex = createKnex(url, { max: 1 });
    knexes.push(standbyKnex);

    const lost: Error[] = [];
    await holdLeadershipLock(holderKnex, KEY, (error) => lost.push(error), { holder: 'test role', heartbeatMs: 50, heartbeatTimeoutMs: 300 });
    const standbyStop = new AbortController();
    let standbyHolds = false;
    const standby = holdLeadershipLock(standbyKnex, KEY, () => undefined, { holder: 'test role', pollMs: 50, signal: standbyStop.signal }).then((release) => {
      standbyHolds = true;
      return release;
    });
    standby.catch(() => undefined);

    await sleep(400); // several heartbeats answered
    expect(lost, 'a holder whose server answers').to.deep.equal([]);
    expect(standbyHolds).to.equal(false);

    proxy.silence();
    await eventually(() => expect(lost).to.have.length(1), 5000);
    expect(lost[0]!.message).to.match(/did not answer within 300 ms/);
    // The server still has the holder's session, so the lock is still taken: nobody is active.
    await sleep(300);
    expect(standbyHolds, 'standby active while the server keeps the old session').to.equal(false);

    proxy.endServerSide();
    const release = await standby;
    expect(standbyHolds).to.equal(true);
    await release();
  });

  it('runs the work in one process at a time: a standby starts it when the active one stops or loses its lock', async () => {
    const knex = createKnex(url, { max: 2 });
    knexes.push(knex);
    const log: string[] = [];
    const role = (name: string): LeaderRole =>
      runWhileLeader({
        knex,
        key: KEY + 1,
        holder: 'test worker',
        pollMs: 50,
        start: async () => {
          log.push(`${name} started`);
          return async () => void log.push(`${name} stopped`);
        },
      });
    const a = role('a');
    const b = role('b');
    const roles = { a, b };
    try {
      await eventually(() => expect(log).to.have.length(1));
      await sleep(300); // both asked several times
      expect(log, 'one active').to.have.length(1);
      const first = log[0]!.split(' ')[0] as 'a' | 'b';
      const second = first === 'a' ? 'b' : 'a';
      expect(roles[first].active).to.equal(true);
      expect(roles[second].active).to.equal(false);

      // The active one's session ends under it (its connection killed): it stops its work, and asks again.
      const { rows } = await knex.raw(
        `SELECT pg_terminate_backend(pid) AS ended FROM pg_locks
         WHERE locktype = 'advisory' AND granted AND classid = 0 AND objid = ? AND objsubid = 1
           AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        [KEY + 1],
      );
      expect(rows).to.deep.equal([{ ended: true }]);
      await eventually(() => expect(log).to.have.length(3));
      expect(log[1]).to.equal(`${first} stopped`);
      // Whichever asked first holds it now (the one that lost may ask again at once).
      const now = log[2]!.split(' ')[0] as 'a' | 'b';
      const other = now === 'a' ? 'b' : 'a';
      expect(roles[now].active).to.equal(true);

      await roles[now].stop();
      await eventually(() => expect(log).to.have.length(5));
      expect(log.slice(3)).to.deep.equal([`${now} stopped`, `${other} started`]);
      expect(roles[other].active).to.equal(true);
    } finally {
      await a.stop();
      await b.stop();
    }
  });

  it('work whose server falls silent is stopped, and the role can still be stopped although the server never answers', async () => {
    const { knex, proxy } = await knexThroughProxy();
    const log: string[] = [];
    const role = runWhileLeader({
      knex,
      key: KEY + 2,
      holder: 'test silent',
      pollMs: 50,
      heartbeatMs: 50,
      heartbeatTimeoutMs: 300,
      start: async () => {
        log.push('started');
        return async () => void log.push('stopped');
      },
    });
    await eventually(() => expect(log).to.deep.equal(['started']));
    proxy.silence();
    await eventually(() => expect(log).to.deep.equal(['started', 'stopped']), 5000);
    expect(role.active).to.equal(false);
    // It asks again, over a connection the silent server never answers; stop() ends that too.
    await role.stop();
  });
});
