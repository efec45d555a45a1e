// The contract suite waits for EventStoreDB's liveness endpoint, not its TCP port: the port
// accepts connections while the node is still starting. Played here by local servers.
import { expect } from 'chai';
import http from 'node:http';
import net from 'node:net';
import { eventStoreDbLive, eventStoreDbNode, waitForEventStoreDb } from '../support/components.js';

async function listening<S extends net.Server>(server: S): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as net.AddressInfo).port;
}

describe('waiting for EventStoreDB (test support)', () => {
  const servers: net.Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
  });

  it('reads the first node of a connection string, without its credentials, and whether it uses TLS', () => {
    expect(eventStoreDbNode('esdb://admin:changeit@db1:2114,db2:2115?tls=false')).to.deep.equal({ host: 'db1', port: 2114, tls: false });
    expect(eventStoreDbNode('esdb+discover://cluster.example.org')).to.deep.equal({ host: 'cluster.example.org', port: 2113, tls: true });
    expect(eventStoreDbNode('esdb://localhost:2113?tlsVerifyCert=false')).to.include({ tls: true });
  });

  it('is live only when GET /health/live answers 204 or 200', async () => {
    let status = 503;
    const paths: string[] = [];
    const server = http.createServer((req, res) => {
      paths.push(req.url ?? '');
      res.writeHead(status).end();
    });
    servers.push(server);
    const url = `esdb://127.0.0.1:${await listening(server)}?tls=false`;
    expect(await eventStoreDbLive(url)).to.equal(false); // starting
    status = 204;
    expect(await eventStoreDbLive(url)).to.equal(true);
    status = 200;
    expect(await eventStoreDbLive(url)).to.equal(true);
    expect(paths).to.deep.equal(['/health/live', '/health/live', '/health/live']);
  });

  it('is not live when the port accepts connections but nothing answers, nor when nothing listens', async () => {
    const silent = net.createServer((socket) => socket.resume()); // accepts and reads, never answers
    servers.push(silent);
    expect(await eventStoreDbLive(`esdb://127.0.0.1:${await listening(silent)}?tls=false`, 300)).to.equal(false);

    const closed = net.createServer();
    const port = await listening(closed);
    await new Promise((resolve) => closed.close(resolve));
    expect(await eventStoreDbLive(`esdb://127.0.0.1:${port}?tls=false`, 300)).to.equal(false);
  });

  it('waits until a node that is starting says it is live', async () => {
    let live = false;
    const server = http.createServer((_req, res) => res.writeHead(live ? 204 : 503).end());
    servers.push(server);
    const url = `esdb://127.0.0.1:${await listening(server)}?tls=false`;
    setTimeout(() => (live = true), 700);
    const started = Date.now();
    expect(await waitForEventStoreDb(url, 5_000)).to.equal(true);
    expect(Date.now() - started).to.be.at.least(600);
    live = false;
    expect(await waitForEventStoreDb(url, 600)).to.equal(false);
  });
});
