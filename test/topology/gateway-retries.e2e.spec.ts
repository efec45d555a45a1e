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
import { setTimeout as sleep } from 'node:timers/promises';
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

/** Two stand-in instances behind nginx; `unavailable` says which requests an instance answers with its own 503. */
function twoInstances(name: string) {
  const state = {
    gateway: null as NginxGateway | null,
    client: undefined as GatewayClient | undefined,
    servers: [] as http.Server[],
    dir: undefined as string | undefined,
    unavailable: (_instance: number, _req: http.IncomingMessage): boolean => false,
    failures: [0, 0],
  };
  before(async function () {
    requireComponent(this, 'nginx', nginxBinary() !== null, 'NGINX_PATH, PATH or /usr/sbin/nginx; install it with .ci/nginx.sh');
    state.dir = await mkdtemp(path.join(os.tmpdir(), `guestpass-gateway-${name}-`));
    for (const instance of [0, 1]) {
      state.servers.push(
        http.createServer((req, res) => {
          // A 503 counts as a failure for nginx: it leaves the instance out for fail_timeout.
          if (state.unavailable(instance, req)) {
            state.failures[instance]!++;
            return void res.writeHead(503, { 'Retry-After': '2', 'Content-Type': 'application/json' }).end('{"success":false}');
          }
          res.writeHead(req.method === 'POST' ? 201 : 200, { 'Content-Type': 'application/json' }).end('{"success":true}');
        }),
      );
    }
    ({ gateway: state.gateway, client: state.client } = await gatewayOver(state.servers, state.dir, `nginx-${name}.log`));
  });
  after(() => stopAll(state.gateway, state.client, state.servers, state.dir));
  return state;
}

describe('gateway: every instance answers 503 (a part they all need is down)', function () {
  this.timeout(60_000);
  const two = twoInstances('all-503');

  it("answers the instances' own 503 with Retry-After, never its 502", async () => {
    two.unavailable = () => true;
    // The first request leaves both out; the later ones go to the backup entries.
    for (let i = 0; i < 6; i++) {
      const res = await two.client!.call(i % 2 ? 'GET' : 'POST', '/api/v1/org/passes', { json: i % 2 ? undefined : {} });
      expect(res.status, `request ${i}`).to.equal(503);
      expect(res.headers['retry-after'], `request ${i}`).to.equal('2');
    }
  });
});

// A rolling restart: nginx leaves an instance out for fail_timeout after it refused or answered
// 503 (while it restarted). If the next instance stopped within that time, nginx would try the
// stopped one and then, among the backup entries, possibly the stopped one again: with two tries,
// a 502 although one instance was up. fail_timeout is 1 s, counted by nginx in whole seconds, so
// an instance is chosen again at most 2 s after its failure: the wait the README asks for.
describe('gateway: an instance left out after a failure, when the other stops', function () {
  this.timeout(60_000);
  const two = twoInstances('left-out');

  it('chooses it again 2 s later: stopping the other then loses nothing', async () => {
    // Instance 1 answers one 503 (as while it restarted); instance 0 answers everything.
    two.unavailable = (instance, req) => instance === 1 && req.headers['x-test-fail'] === '1';
    while (two.failures[1] === 0) {
      const res = await two.client!.call('GET', '/api/v1/org/passes', { headers: { 'x-test-fail': '1' } });
      expect(res.status, res.text).to.equal(200);
    }
    // The rolling restart's wait, then instance 0 stops: its connections are refused.
    await sleep(2000);
    const stopping = two.servers[0]!;
    stopping.closeAllConnections();
    await new Promise<void>((resolve) => stopping.close(() => resolve()));
    const statuses: number[] = [];
    for (const [method, route] of [
      ['POST', '/api/v1/org/passes'],
      ['DELETE', '/api/v1/org/passes/gst_0123456789abcdef0123456789abcdef'],
      ['POST', '/api/v1/org/facilities'],
      ['GET', '/api/v1/org/passes'],
      ['POST', '/api/v1/org/passes'],
      ['POST', '/api/oauth/token'],
    ] as const) {
      statuses.push((await two.client!.call(method, route, { json: method === 'GET' || method === 'DELETE' ? undefined : {} })).status);
    }
    expect(statuses).to.deep.equal([201, 200, 201, 200, 201, 201]);
  });
});
