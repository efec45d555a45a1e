// The active door-gateway's lock when its server falls silent without the connection closing (the
// holder's network or the server's host gone, not the holder's process): the holder steps down
// on its own, and a standby gets the lock only once the server has ended the silent session.
// A proxy between the holder and PostgreSQL plays the network: it stops passing bytes, and later
// closes its side towards the server, as the server's own keepalives would.
import net from 'node:net';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { createKnex } from '../../shared/db/knex.js';
import { holdLeadershipLock } from '../../door-gateway/leadership-lock.js';
import { migratedDatabaseUrl } from '../support/database.js';
import { eventually, sleep } from './fixtures.js';

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

describe('door-gateway leadership lock (PostgreSQL)', function () {
  this.timeout(30_000);
  let url: string;
  const knexes: Knex[] = [];

  before(async () => {
    url = await migratedDatabaseUrl('leadership_lock');
  });
  after(async () => {
    for (const knex of knexes) await knex.destroy().catch(() => undefined);
  });

  it('a holder whose server stops answering steps down before the server lets a standby in', async () => {
    const target = new URL(url);
    const proxy = await silenceableProxy({ host: target.hostname, port: Number(target.port || 5432) });
    try {
      const viaProxy = new URL(url);
      viaProxy.hostname = '127.0.0.1';
      viaProxy.port = String(proxy.port);
      const holderKnex = createKnex(viaProxy.toString(), { max: 1 });
      const standbyKnex = createKnex(url, { max: 1 });
      knexes.push(holderKnex, standbyKnex);

      const lost: Error[] = [];
      await holdLeadershipLock(holderKnex, KEY, (error) => lost.push(error), { heartbeatMs: 50, heartbeatTimeoutMs: 300 });
      const standbyStop = new AbortController();
      let standbyHolds = false;
      const standby = holdLeadershipLock(standbyKnex, KEY, () => undefined, { pollMs: 50, signal: standbyStop.signal }).then((release) => {
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
    } finally {
      await proxy.close();
    }
  });
});
