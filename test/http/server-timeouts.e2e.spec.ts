// The HTTP timeouts of a service behind a proxy (HTTP_KEEP_ALIVE_TIMEOUT_MS,
// HTTP_HEADERS_TIMEOUT_MS, HTTP_REQUEST_TIMEOUT_MS), against the query service as a child
// process with small values: a client that sends its headers or its body too slowly is cut off,
// while an idle kept-alive connection outlives both (it is the gateway's to close first).
import { expect } from 'chai';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../shared/db/embedded-postgres.js';
import { migratedDatabaseUrl } from '../support/database.js';
import { startChild, type Child } from '../support/child-process.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Sends `head`, then `trickle` one byte every 100 ms until the server closes; what came back and when. */
async function trickle(port: number, head: string, trickleBytes: string): Promise<{ response: string; closedAfterMs: number }> {
  const socket = net.connect(port, '127.0.0.1');
  let response = '';
  socket.on('data', (chunk: Buffer) => (response += chunk.toString()));
  socket.on('error', () => undefined);
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  const started = Date.now();
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now() - started)));
  socket.write(head);
  let i = 0;
  const timer = setInterval(() => {
    if (!socket.destroyed) socket.write(trickleBytes[i++ % trickleBytes.length]!);
  }, 100);
  const closedAfterMs = await Promise.race([closed, sleep(10_000).then(() => -1)]);
  clearInterval(timer);
  socket.destroy();
  return { response, closedAfterMs };
}

describe('HTTP server timeouts (a service behind a proxy)', function () {
  this.timeout(120_000);
  let dataDir: string;
  let child: Child;
  let port: number;

  before(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'guestpass-timeouts-'));
    await chmod(dataDir, 0o755);
    port = await freePort();
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? os.tmpdir(),
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'info',
      GUESTPASS_DATA_DIR: dataDir,
      DATABASE_URL: await migratedDatabaseUrl('timeouts'),
      HTTP_HEADERS_TIMEOUT_MS: '500',
      HTTP_REQUEST_TIMEOUT_MS: '1500',
      // HTTP_KEEP_ALIVE_TIMEOUT_MS left at its default, 65 s
    };
    child = await startChild(path.join(root, 'query-service/main.ts'), env, { ready: 'query service listening', timeoutMs: 90_000 });
  });
  after(async () => {
    await child?.kill();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('cuts off a client that sends its headers slowly (slowloris) after HTTP_HEADERS_TIMEOUT_MS', async () => {
    const { response, closedAfterMs } = await trickle(port, `GET /api/v1/openapi.json HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Slow: `, 'abcdefgh');
    expect(closedAfterMs, 'the connection was still open after 10 s').to.be.above(0);
    expect(closedAfterMs).to.be.within(400, 2500);
    expect(response).to.match(/^HTTP\/1\.1 408 /);
  });

  it('cuts off a client that sends its body slowly after HTTP_REQUEST_TIMEOUT_MS', async () => {
    const body = '{"first_name":"Slow"}'.padEnd(1000, ' ');
    const { closedAfterMs } = await trickle(
      port,
      `POST /api/v1/org/passes HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
      body,
    );
    expect(closedAfterMs, 'the connection was still open after 10 s').to.be.above(0);
    expect(closedAfterMs).to.be.within(1000, 4000);
  });

  it('keeps an idle connection open past both (65 s by default, longer than nginx’s upstream keepalive_timeout) and serves it again', async () => {
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    const request = `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`;
    socket.write(request);
    await sleep(300);
    expect(received).to.match(/^HTTP\/1\.1 200 /);
    expect(received.toLowerCase()).to.include('keep-alive: timeout=65');
    await sleep(2000); // past the headers and the request timeouts
    expect(socket.destroyed).to.equal(false);
    received = '';
    socket.write(request);
    await sleep(300);
    expect(received).to.match(/^HTTP\/1\.1 200 /);
    socket.destroy();
  });
});
