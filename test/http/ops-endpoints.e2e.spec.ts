// The operators' endpoints on a process's own port: /healthz, /readyz (each part the process
// uses, and the failing one named), /metrics (Prometheus; behind METRICS_TOKEN when set). Driven
// against `npm start`'s gateway in-process, and a bare service server for the token.
import { expect } from 'chai';
import os from 'node:os';
import path from 'node:path';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadConfig } from '../../shared/config.js';
import { createLogger } from '../../shared/logger.js';
import { startEmbedded } from '../../runtime/embedded.js';
import { openServiceServer, type ServiceServer } from '../../shared/http/service-server.js';
import { freshDatabase } from '../support/database.js';

type Embedded = Awaited<ReturnType<typeof startEmbedded>>;

async function until<T>(what: string, probe: () => Promise<T | null>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The value of one sample line of an exposition, or null. */
function sample(exposition: string, name: string, labels: RegExp = /.*/): number | null {
  for (const line of exposition.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})? (\S+)$/.exec(line);
    if (match && match[1] === name && labels.test(match[2] ?? '')) return Number(match[3]);
  }
  return null;
}

describe('operators’ endpoints (/healthz, /readyz, /metrics)', function () {
  this.timeout(90_000);
  const logger = createLogger('silent');

  describe('on npm start’s port', () => {
    let dataDir: string;
    let service: Embedded;

    before(async () => {
      dataDir = await mkdtemp(path.join(os.tmpdir(), 'guestpass-ops-'));
      const config = loadConfig({ DATABASE_URL: await freshDatabase('ops'), PORT: '0', GUESTPASS_DATA_DIR: dataDir });
      service = await startEmbedded(config, logger);
    });
    after(async () => {
      await service?.stop();
      await rm(dataDir, { recursive: true, force: true });
    });

    it('/healthz: 200 {"status":"ok"}, not stored', async () => {
      const res = await fetch(`${service.baseUrl}/healthz`);
      expect(res.status).to.equal(200);
      expect(res.headers.get('cache-control')).to.equal('no-store');
      expect(await res.json()).to.deep.equal({ status: 'ok' });
    });

    it('/readyz: 200 listing the parts it checks; no credential needed, nothing but their state', async () => {
      const res = await fetch(`${service.baseUrl}/readyz`);
      expect(res.status).to.equal(200);
      expect(res.headers.get('cache-control')).to.equal('no-store');
      expect(await res.json()).to.deep.equal({ status: 'ready', checks: { database: 'ok', event_store: 'ok', mqtt: 'ok', audit_log: 'ok' } });
    });

    it('/metrics: the request counter by route template (never the raw path), and the process and pipeline metrics', async () => {
      const res401 = await fetch(`${service.baseUrl}/api/v1/org/members/emp_notARealId42`);
      expect(res401.status).to.equal(401);
      const res = await fetch(`${service.baseUrl}/metrics`);
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
      expect(res.headers.get('cache-control')).to.equal('no-store');
      const body = await res.text();
      expect(sample(body, 'guestpass_http_requests_total', /method="GET",route="\/api\/v1\/org\/members\/:\w+",status="401"/)).to.be.at.least(1);
      expect(sample(body, 'guestpass_http_request_duration_seconds_count', /route="\/api\/v1\/org\/members\/:\w+"/)).to.be.at.least(1);
      expect(body).not.to.include('emp_notARealId42');
      expect(sample(body, 'process_cpu_user_seconds_total')).to.be.a('number');
      expect(sample(body, 'guestpass_projection_lag_events', /projection="pass_list"/)).to.be.a('number');
      expect(sample(body, 'guestpass_reactor_lag_events')).to.be.a('number');
      expect(sample(body, 'guestpass_pass_deliveries', /channel="email",outcome="sent"/)).to.equal(0);
      expect(sample(body, 'guestpass_door_gateway_lag_seconds')).to.equal(0);
      expect(body).to.include('guestpass_revocation_door_ack_seconds_bucket');
    });

    it('times a revocation from its event to the door controller’s acknowledgement', async () => {
      const auth = { Authorization: `Bearer ${service.demoKey}`, 'Content-Type': 'application/json' };
      const { facilities } = (await (await fetch(`${service.baseUrl}/api/v1/org/facilities`, { headers: auth })).json()) as { facilities: Array<{ id: number }> };
      const facilityId = facilities[0]!.id;
      // The demo facility's simulated controller starts within 5 s of the seed.
      await until('the simulated controller', async () => (service.doorPath.controllers.get(facilityId)?.length ? true : null));
      const created = await fetch(`${service.baseUrl}/api/v1/org/passes`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ first_name: 'Ada', phone: '+44 20 7946 0001', arrival_date: new Date().toISOString().slice(0, 10), facility_id: facilityId }),
      });
      expect(created.status).to.equal(201);
      const { public_id: publicId } = (await created.json()) as { public_id: string };
      const revoked = await fetch(`${service.baseUrl}/api/v1/org/passes/${publicId}`, { method: 'DELETE', headers: auth });
      expect(revoked.status).to.be.oneOf([200, 204]);
      const count = await until('a revocation acknowledged by the door', async () => {
        const body = await (await fetch(`${service.baseUrl}/metrics`)).text();
        const n = sample(body, 'guestpass_revocation_door_ack_seconds_count');
        return n !== null && n >= 1 ? n : null;
      });
      expect(count).to.be.at.least(1);
    });

    it('counts 429 answers of a rate limit by its policy', async () => {
      // The organization API allows 300 requests a minute per source address.
      for (let i = 0; i < 7; i++) {
        await Promise.all(Array.from({ length: 50 }, () => fetch(`${service.baseUrl}/api/v1/org/facilities`).then((r) => r.arrayBuffer())));
      }
      const body = await (await fetch(`${service.baseUrl}/metrics`)).text();
      expect(sample(body, 'guestpass_rate_limited_total', /policy="org-api"/)).to.be.at.least(1);
      // The limit is taken before routing: those answers count under the `unmatched` route.
      expect(sample(body, 'guestpass_http_requests_total', /route="unmatched",status="429"/)).to.be.at.least(1);
    });

    it('/readyz: 503 naming the failing part when the MQTT broker goes away', async () => {
      await service.doorPath.broker!.close();
      const body = await until('a 503 from /readyz', async () => {
        const res = await fetch(`${service.baseUrl}/readyz`);
        if (res.status !== 503) return null;
        expect(res.headers.get('retry-after')).to.equal('1');
        expect(res.headers.get('cache-control')).to.equal('no-store');
        return res.json();
      });
      expect(body).to.deep.equal({ status: 'unavailable', failing: ['mqtt'], checks: { database: 'ok', event_store: 'ok', mqtt: 'failing', audit_log: 'ok' } });
      // Alive all the same.
      expect((await fetch(`${service.baseUrl}/healthz`)).status).to.equal(200);
    });
  });

  describe('with METRICS_TOKEN', () => {
    const token = 'metrics-token-0123456789abcdef';
    let server: ServiceServer;
    let base: string;

    before(async () => {
      const config = loadConfig({ METRICS_TOKEN: token, PORT: '0' });
      server = await openServiceServer({ host: '127.0.0.1', port: 0, timeouts: config.http, metricsToken: config.metricsToken, logger, name: 'test' });
      base = `http://127.0.0.1:${server.port}`;
    });
    after(() => server?.close());

    it('/metrics answers 401 without the token or with another, and the exposition with it', async () => {
      const attempts: Array<Record<string, string>> = [{}, { Authorization: 'Bearer wrong' }, { Authorization: `Bearer ${token}x` }, { Authorization: `Basic ${token}` }];
      for (const headers of attempts) {
        const res = await fetch(`${base}/metrics`, { headers });
        expect(res.status, JSON.stringify(headers)).to.equal(401);
        expect(res.headers.get('www-authenticate')).to.equal('Bearer realm="metrics"');
        expect(await res.text()).not.to.include('process_cpu');
      }
      const res = await fetch(`${base}/metrics`, { headers: { Authorization: `Bearer ${token}` } });
      expect(res.status).to.equal(200);
      expect(await res.text()).to.include('process_cpu_user_seconds_total');
    });

    it('/healthz and /readyz need no token; /readyz is 503 with Retry-After until the process serves', async () => {
      expect((await fetch(`${base}/healthz`)).status).to.equal(200);
      const starting = await fetch(`${base}/readyz`);
      expect(starting.status).to.equal(503);
      expect(starting.headers.get('retry-after')).to.equal('1');
      expect(await starting.json()).to.deep.equal({ status: 'starting' });
      const other = await fetch(`${base}/api/v1/anything`, { method: 'POST' });
      expect(other.status).to.equal(503);
      expect(other.headers.get('retry-after')).to.equal('1');
      expect(other.headers.get('connection')).to.equal('close');

      server.serve(null, [{ name: 'database', check: async () => undefined }, { name: 'kafka', check: () => Promise.reject(new Error('down')) }]);
      const failing = await fetch(`${base}/readyz`);
      expect(failing.status).to.equal(503);
      expect(await failing.json()).to.deep.equal({ status: 'unavailable', failing: ['kafka'], checks: { database: 'ok', kafka: 'failing' } });
      expect((await fetch(`${base}/api/v1/anything`)).status).to.equal(404);
    });
  });
});
