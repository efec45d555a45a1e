// What the gateway (nginx with deploy/gateway.nginx.conf) sends again when an instance's
// connection breaks after the request was sent: the case of a connection the kernel had queued on
// a listener in the moment it closed (a rolling restart), which the instance never reads. Here
// each "instance" is a bare HTTP server that resets the connection of the first request it sees
// of each X-Request-Id and answers the second: whichever instance nginx tries first resets it.
// The services' side of the contract (a repeat of a pass create answers the first batch) is
// tested in test/domain/create-passes.int.spec.ts and test/org-api/create-pass.e2e.spec.ts.
//
// Needs nginx; in CI a missing one fails the suite, elsewhere it skips saying so.
import { expect } from 'chai';
import http from 'node:http';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { requireComponent } from '../support/components.js';
import { freePort } from '../../shared/db/embedded-postgres.js';
import { ROOT, makeCertificate, nginxBinary, NginxGateway } from './support/nginx-gateway.js';
import { GatewayClient } from './support/gateway-client.js';

/**
 * nginx with the shipped configuration in front of these stand-in instances (as command and query
 * services alike), with one worker: what nginx knows of an instance (left out or not) is per worker.
 */
async function gatewayOver(servers: readonly http.Server[], dir: string, logName: string): Promise<{ gateway: NginxGateway; client: GatewayClient }> {
  const upstreams: string[] = [];
  for (const server of servers) {
    const port = await freePort();
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    upstreams.push(`127.0.0.1:${port}`);
  }
  const certificate = await makeCertificate(path.join(dir, 'tls'));
  const logDir = path.join(ROOT, 'test-artifacts', 'gateway-retries');
  await mkdir(logDir, { recursive: true });
  const gateway = await NginxGateway.start({
    binary: nginxBinary()!,
    dir: path.join(dir, 'nginx'),
    logFile: path.join(logDir, logName),
    port: await freePort(),
    certificate,
    commandUpstreams: upstreams,
    queryUpstreams: upstreams,
    workers: 1,
  });
  return { gateway, client: GatewayClient.direct(gateway.url, certificate.ca) };
}

async function stopAll(gateway: NginxGateway | null, client: GatewayClient | undefined, servers: ReadonlyArray<http.Server | undefined>, dir: string | undefined): Promise<void> {
  await client?.close();
  await gateway?.stop();
  for (const server of servers) {
    server?.closeAllConnections();
    server?.close();
  }
  if (dir) await rm(dir, { recursive: true, force: true });
}

describe('gateway: a request whose connection broke after it was sent', function () {
  this.timeout(60_000);
  let dir: string;
  let gateway: NginxGateway | null = null;
  let client: GatewayClient;
  const instances: http.Server[] = [];
  /** Every arrival at an instance: request id, method and path. */
  const arrivals: Array<{ id: string; method: string; url: string; reset: boolean }> = [];

  before(async function () {
    requireComponent(this, 'nginx', nginxBinary() !== null, 'NGINX_PATH, PATH or /usr/sbin/nginx; install it with .ci/nginx.sh');
    dir = await mkdtemp(path.join(os.tmpdir(), 'guestpass-gateway-retries-'));
    const seen = new Set<string>();
    for (let i = 0; i < 2; i++) {
      const server = http.createServer((req, res) => {
        const id = String(req.headers['x-request-id'] ?? '');
        const reset = !seen.has(id);
        seen.add(id);
        arrivals.push({ id, method: req.method ?? '', url: req.url ?? '', reset });
        // The request was read and the connection goes down without an answer, as nginx meets
        // a connection reset after it sent the request.
        if (reset) return void req.socket.resetAndDestroy();
        res.writeHead(req.method === 'POST' ? 201 : 200, { 'Content-Type': 'application/json', 'X-Request-Id': id }).end('{"success":true}');
      });
      instances.push(server);
    }
    ({ gateway, client } = await gatewayOver(instances, dir, 'nginx.log'));
  });

  after(() => stopAll(gateway, client, instances, dir));

  const tries = (id: string) => arrivals.filter((a) => a.id === id);

  for (const route of ['/api/v1/org/passes', '/api/v1/passes']) {
    it(`sends a pass create (POST ${route}) to the other instance, with the same X-Request-Id`, async () => {
      const res = await client.call('POST', route, { json: { first_name: 'Ada' } });
      expect(res.status, res.text).to.equal(201);
      const id = String(res.headers['x-request-id'] ?? '');
      expect(id).to.match(/^[0-9a-f]{32}$/);
      expect(tries(id).map((a) => a.reset), 'tries: reset, then answered').to.deep.equal([true, false]);
      expect(new Set(tries(id).map((a) => a.url))).to.deep.equal(new Set([route]));
    });
  }

  it('sends a revocation (DELETE) again too', async () => {
    const res = await client.call('DELETE', '/api/v1/org/passes/gst_0123456789abcdef0123456789abcdef');
    expect(res.status, res.text).to.equal(200);
    expect(tries(String(res.headers['x-request-id'])).map((a) => a.reset)).to.deep.equal([true, false]);
  });

  for (const [method, route] of [
    ['POST', '/api/v1/org/facilities'],
    ['POST', '/api/oauth/token'],
    ['POST', '/api/v1/org/passes/gst_0123456789abcdef0123456789abcdef/resend'],
    ['PATCH', '/api/v1/org/members/1'],
  ] as const) {
    it(`never sends another write (${method} ${route}) twice: the client gets 502`, async () => {
      const before = arrivals.length;
      const res = await client.call(method, route, { json: {} });
      expect(res.status).to.equal(502);
      expect(arrivals.slice(before).map((a) => a.reset), 'tries').to.deep.equal([true]);
    });
  }
});

// A rolling restart's other hazard: the instance that came back is still left out by nginx
// (it refused or answered 503 less than fail_timeout ago) when the next one stops. nginx then
// tries the stopped one, and among the backups may try the stopped one first again: with two
// tries the client got 502 although one instance was up.
describe('gateway: one instance down while nginx still leaves the other out', function () {
  this.timeout(60_000);
  let dir: string;
  let gateway: NginxGateway | null = null;
  let client: GatewayClient;
  let down: http.Server;
  let up: http.Server;
  let upFailures = 0;

  before(async function () {
    requireComponent(this, 'nginx', nginxBinary() !== null, 'NGINX_PATH, PATH or /usr/sbin/nginx; install it with .ci/nginx.sh');
    dir = await mkdtemp(path.join(os.tmpdir(), 'guestpass-gateway-left-out-'));
    const serve = (failing: boolean) =>
      http.createServer((req, res) => {
        // A 503 counts as a failure for nginx: the instance is left out for fail_timeout.
        if (failing && req.headers['x-test-fail'] === '1') {
          upFailures++;
          return void res.writeHead(503, { 'Retry-After': '1' }).end();
        }
        res.writeHead(req.method === 'POST' ? 201 : 200, { 'Content-Type': 'application/json' }).end('{"success":true}');
      });
    down = serve(false);
    up = serve(true);
    ({ gateway, client } = await gatewayOver([down, up], dir, 'nginx-left-out.log'));
  });

  after(() => stopAll(gateway, client, [down, up], dir));

  it('reaches the instance that is up, for every method, while the other is down and the up one still left out', async () => {
    // The up instance answers one 503 (as while it was starting): nginx leaves it out for 5 s.
    while (upFailures === 0) {
      const res = await client.call('GET', '/api/v1/org/passes', { headers: { 'x-test-fail': '1' } });
      expect(res.status, res.text).to.equal(200);
    }
    // The other instance stops: its connections are refused.
    down.closeAllConnections();
    await new Promise<void>((resolve) => down.close(() => resolve()));
    const statuses: number[] = [];
    for (const [method, route] of [
      ['POST', '/api/v1/org/passes'],
      ['DELETE', '/api/v1/org/passes/gst_0123456789abcdef0123456789abcdef'],
      ['POST', '/api/v1/org/facilities'],
      ['GET', '/api/v1/org/passes'],
      ['POST', '/api/v1/org/passes'],
      ['POST', '/api/oauth/token'],
    ] as const) {
      statuses.push((await client.call(method, route, { json: method === 'GET' || method === 'DELETE' ? undefined : {} })).status);
    }
    expect(statuses).to.deep.equal([201, 200, 201, 200, 201, 201]);
  });
});

