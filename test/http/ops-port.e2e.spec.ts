// OPS_PORT: the operators' endpoints on a port of their own from the first moment, and the API
// port opened only once the process serves, so a gateway's connection to a starting instance is
// refused (and passed on to another instance, whatever the method) rather than answered 503. On
// a stop, a request on a connection already open is still served, and its connection closes.
import { expect } from 'chai';
import http from 'node:http';
import type net from 'node:net';
import { loadConfig } from '../../shared/config.js';
import { createLogger } from '../../shared/logger.js';
import { freePort } from '../../shared/db/embedded-postgres.js';
import { openServiceServer, type ServiceServer } from '../../shared/http/service-server.js';

const logger = createLogger('silent');

async function connectError(port: number): Promise<string | null> {
  try {
    await fetch(`http://127.0.0.1:${port}/anything`, { signal: AbortSignal.timeout(2000) });
    return null;
  } catch (error) {
    return String(((error as Error).cause as NodeJS.ErrnoException | undefined)?.code ?? error);
  }
}

/** One request on a kept-alive connection of `agent`. */
function get(agent: http.Agent, port: number, path: string): Promise<{ status: number; connection: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection, body }));
    });
    req.on('error', reject);
  });
}

describe('OPS_PORT: the API port opens only when ready', function () {
  this.timeout(30_000);
  let server: ServiceServer | null = null;

  afterEach(() => server?.close());

  it('is read from the environment, and absent by default', () => {
    expect(loadConfig({ OPS_PORT: '9090' }).opsPort).to.equal(9090);
    expect(loadConfig({}).opsPort).to.equal(null);
    expect(() => loadConfig({ OPS_PORT: 'ninety' })).to.throw(/OPS_PORT/);
  });

  it('answers the operators on their port while starting, refuses the API port until it serves, then serves both', async () => {
    const [port, opsPort] = [await freePort(), await freePort()];
    const config = loadConfig({ PORT: String(port), OPS_PORT: String(opsPort) });
    server = await openServiceServer({ host: '127.0.0.1', port, opsPort: config.opsPort, timeouts: config.http, metricsToken: null, logger, name: 'test' });
    expect(server.opsPort).to.equal(opsPort);
    expect((await fetch(`http://127.0.0.1:${opsPort}/healthz`)).status).to.equal(200);
    const starting = await fetch(`http://127.0.0.1:${opsPort}/readyz`);
    expect(starting.status).to.equal(503);
    expect(await starting.json()).to.deep.equal({ status: 'starting' });
    expect((await fetch(`http://127.0.0.1:${opsPort}/metrics`)).status).to.equal(200);
    expect(await connectError(port), 'the API port while starting').to.equal('ECONNREFUSED');

    await server.serve((_req, res) => res.end('app'), []);
    expect((await fetch(`http://127.0.0.1:${opsPort}/readyz`)).status).to.equal(200);
    const app = await fetch(`http://127.0.0.1:${port}/anything`);
    expect(app.status).to.equal(200);
    expect(await app.text()).to.equal('app');
    expect((await fetch(`http://127.0.0.1:${opsPort}/anything`)).status, 'the app is not on the operators\' port').to.equal(404);
  });

  it('on close refuses new API connections, lets a request under way finish (Connection: close), says stopping on the operators\' port, and closes it last', async () => {
    const [port, opsPort] = [await freePort(), await freePort()];
    const config = loadConfig({ PORT: String(port), HTTP_STOP_IDLE_MS: '0' });
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    server = await openServiceServer({ host: '127.0.0.1', port, opsPort, timeouts: config.http, metricsToken: null, logger, name: 'test' });
    await server.serve(async (req, res) => {
      if (req.url === '/slow') await held; // keeps the server draining while the test looks
      res.end(`served ${req.url}`);
    }, []);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      expect((await get(agent, port, '/first')).status).to.equal(200); // the connection stays open
      const other = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const slow = get(other, port, '/slow');
      await new Promise((r) => setTimeout(r, 100));
      const closing = server.close();
      await new Promise((r) => setTimeout(r, 50));
      expect(await connectError(port), 'a new API connection while stopping').to.equal('ECONNREFUSED');
      const ready = await fetch(`http://127.0.0.1:${opsPort}/readyz`);
      expect(ready.status, 'the operators\' port while draining').to.equal(503);
      expect(await ready.json()).to.deep.equal({ status: 'stopping' });
      release();
      const answered = await slow;
      expect(answered.status).to.equal(200);
      expect(answered.connection).to.equal('close');
      other.destroy();
      await closing;
      expect(await connectError(opsPort), 'the operators\' port once stopped').to.equal('ECONNREFUSED');
    } finally {
      agent.destroy();
    }
  });

  it('on close leaves an idle kept-alive connection to its client for HTTP_STOP_IDLE_MS: a request on it is served with Connection: close; one left idle is closed after', async () => {
    const [port, opsPort] = [await freePort(), await freePort()];
    const config = loadConfig({ PORT: String(port), HTTP_STOP_IDLE_MS: '1500' });
    server = await openServiceServer({ host: '127.0.0.1', port, opsPort, timeouts: config.http, metricsToken: null, logger, name: 'test' });
    await server.serve((req, res) => res.end(`served ${req.url}`), []);
    // Two clients, each with one kept-alive connection, idle when the stop begins (as a
    // gateway's pooled connections to an instance are).
    const reused = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const idle = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const sockets: net.Socket[] = [];
    for (const agent of [reused, idle]) {
      await new Promise<void>((resolve, reject) => {
        const req = http.get({ host: '127.0.0.1', port, path: '/first', agent }, (res) => {
          res.resume();
          res.on('end', resolve);
        });
        req.on('socket', (socket) => sockets.push(socket));
        req.on('error', reject);
      });
    }
    const [reusedSocket, idleSocket] = sockets as [net.Socket, net.Socket];
    const idleClosed = new Promise<void>((resolve) => idleSocket.once('close', () => resolve()));
    try {
      const closing = server.close();
      await new Promise((r) => setTimeout(r, 100));
      expect(reusedSocket.destroyed || reusedSocket.readyState !== 'open', 'the first idle connection, just after the stop began').to.equal(false);
      expect(idleSocket.destroyed || idleSocket.readyState !== 'open', 'the second idle connection, just after the stop began').to.equal(false);
      // The client sends on its kept-alive connection: served, on that same connection, which then closes.
      let sentOn: net.Socket | null = null;
      const answered = await new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
        const req = http.get({ host: '127.0.0.1', port, path: '/after-stop', agent: reused }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection }));
        });
        req.on('socket', (socket) => (sentOn = socket));
        req.on('error', reject);
      });
      expect(sentOn, 'the request went on the connection open before the stop').to.equal(reusedSocket);
      expect(answered).to.deep.equal({ status: 200, connection: 'close' });
      // The other one its client never uses again: the server closes it once the grace is over.
      await idleClosed;
      await closing;
      expect(await connectError(opsPort), 'the operators\' port once stopped').to.equal('ECONNREFUSED');
    } finally {
      reused.destroy();
      idle.destroy();
    }
  });
});
