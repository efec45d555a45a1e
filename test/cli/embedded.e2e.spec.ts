import { expect } from 'chai';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { loadConfig } from '../../shared/config.js';
import { createLogger } from '../../shared/logger.js';
import { startEmbedded } from '../../runtime/embedded.js';
import { DoorCliError, scanAtDoor } from '../../cli/door.js';
import { freshDatabase } from '../support/database.js';
import { authorizeInBrowser } from '../sign-in/support/sign-in-driver.js';
import { pkce } from '../sign-in/support/session-probe.js';

describe('npm start (the embedded runner)', function () {
  this.timeout(60_000);
  let dataDir: string;
  let databaseUrl: string;
  const logger = createLogger('silent');

  before(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'guestpass-embedded-'));
    databaseUrl = await freshDatabase('embedded');
  });
  after(() => rm(dataDir, { recursive: true, force: true }));

  const start = () =>
    startEmbedded(loadConfig({ DATABASE_URL: databaseUrl, PORT: '0', GUESTPASS_DATA_DIR: dataDir, PROJECTION_WAIT_MS: '5000' }), logger);

  it('seeds a demo organization on an empty log, serves it on one port, and seeds nothing on the next start', async () => {
    const first = await start();
    let publicId: string;
    try {
      expect(first.demoKey).to.match(/^svc_sk_/);
      // The demo admin signs in through the demo OAuth client (public, PKCE, loopback redirect).
      const demo = first.demo!;
      const { challenge } = pkce();
      const signedIn = await authorizeInBrowser(first.baseUrl, {
        clientId: demo.clientId,
        redirectUri: 'http://127.0.0.1:7777/callback',
        scope: 'openid profile',
        codeChallenge: challenge,
        state: 'demo',
        email: demo.adminEmail,
        password: demo.adminPassword,
      });
      expect(signedIn.callback.searchParams.get('state')).to.equal('demo');
      expect(signedIn.callback.searchParams.get('iss')).to.equal(first.baseUrl);
      const auth = { Authorization: `Bearer ${first.demoKey}` };
      const facilities = await fetch(`${first.baseUrl}/api/v1/org/facilities`, { headers: auth });
      expect(facilities.status).to.equal(200);
      const { facilities: list } = (await facilities.json()) as { facilities: Array<{ id: number; is_active: boolean }> };
      expect(list).to.have.length(1);

      const created = await fetch(`${first.baseUrl}/api/v1/org/passes`, {
        method: 'POST',
        headers: { ...auth, 'Content-Type': 'application/json' },
        body: JSON.stringify({ first_name: 'Grace', email: 'grace@example.com', arrival_date: '2030-01-02', facility_id: list[0]!.id }),
      });
      expect(created.status).to.equal(201);
      publicId = ((await created.json()) as { public_id: string }).public_id;

      // A newcomer can scan a QR at once: the embedded door path grants a pass valid today (its
      // first granted entry checks the guest in), and denies a revoked one.
      const today = new Date().toISOString().slice(0, 10);
      const batch = await fetch(`${first.baseUrl}/api/v1/org/passes`, {
        method: 'POST',
        headers: { ...auth, 'Content-Type': 'application/json' },
        body: JSON.stringify({ first_name: 'Alan', phone: '+44 20 7946 0000', arrival_date: today, facility_id: list[0]!.id, quantity: 2 }),
      });
      expect(batch.status).to.equal(201);
      const { qr_values: qrValues, public_id: scannedId } = (await batch.json()) as { public_id: string; qr_values: string[] };
      const until = async (qrValue: string, want: { result: string; reason: string | null }) => {
        let last: Awaited<ReturnType<typeof scanAtDoor>> | null = null;
        for (let i = 0; i < 100; i++) {
          try {
            last = await scanAtDoor({ url: first.doorPath.mqttUrl, facilityId: list[0]!.id, qrValue, timeoutMs: 5000 });
            if (last.result === want.result && last.reason === want.reason) return last;
          } catch (error) {
            // The demo is seeded last: its facility's simulated controller starts on the door
            // path's next look for new facilities.
            if (!(error instanceof DoorCliError && /no simulated controller is online/.test(error.message))) throw error;
          }
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        return last;
      };
      expect(await until(qrValues[0]!, { result: 'granted', reason: null })).to.include({ result: 'granted', reason: null });

      const listAll = async () =>
        ((await (await fetch(`${first.baseUrl}/api/v1/org/passes`, { headers: auth })).json()) as { items: Array<{ public_id: string; status: string }> }).items;
      let status = '';
      for (let i = 0; i < 100 && status !== 'checked_in'; i++) {
        status = (await listAll()).find((p) => p.public_id === scannedId)?.status ?? '';
        if (status !== 'checked_in') await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(status).to.equal('checked_in');
      expect((await fetch(`${first.baseUrl}/api/v1/org/passes/${scannedId}`, { method: 'DELETE', headers: auth })).status).to.equal(409);

      const other = (await listAll()).find((p) => p.public_id !== scannedId && p.status === 'expected' && p.public_id !== publicId)!;
      expect((await fetch(`${first.baseUrl}/api/v1/org/passes/${other.public_id}`, { method: 'DELETE', headers: auth })).status).to.equal(200);
      expect(await until(qrValues[1]!, { result: 'denied', reason: 'revoked' })).to.include({ result: 'denied', reason: 'revoked' });

      // The cursor secret of the embedded default is generated once and kept with the data.
      expect((await stat(path.join(dataDir, 'page-cursor.secret'))).mode & 0o077).to.equal(0);
    } finally {
      await first.stop();
    }

    const second = await start();
    try {
      expect(second.demoKey).to.equal(null);
      const listed = await fetch(`${second.baseUrl}/api/v1/org/passes`, { headers: { 'X-API-Key': first.demoKey! } });
      expect(listed.status).to.equal(200);
      const page = (await listed.json()) as { items: Array<{ public_id: string }>; total: number };
      expect(page.items.map((p) => p.public_id)).to.include(publicId);
      expect(page.total).to.equal(3);
    } finally {
      await second.stop();
    }
  });

  it('starts when the data folder does not exist yet, creating it', async () => {
    const missing = path.join(dataDir, 'not', 'yet');
    const service = await startEmbedded(
      loadConfig({ DATABASE_URL: await freshDatabase('embedded_dir'), PORT: '0', GUESTPASS_DATA_DIR: missing, PROJECTION_WAIT_MS: '5000' }),
      logger,
    );
    try {
      // The embedded broker's URL, for `guestpass door scan` in another terminal.
      expect(existsSync(path.join(missing, 'mqtt.url'))).to.equal(true);
      expect(service.demoKey).to.match(/^svc_sk_/);
    } finally {
      await service.stop();
    }
  });

  it('seeds the demo only once start-up has succeeded, so a failed start loses no credentials and leaves nothing running', async () => {
    const url = await freshDatabase('embedded_retry');
    const dir = path.join(dataDir, 'retry');
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', () => resolve()));
    const port = (taken.address() as net.AddressInfo).port;
    try {
      const failed = await startEmbedded(loadConfig({ DATABASE_URL: url, PORT: String(port), GUESTPASS_DATA_DIR: dir, PROJECTION_WAIT_MS: '5000' }), logger).then(
        (service) => service.stop().then(() => null),
        (error: NodeJS.ErrnoException) => error,
      );
      expect(failed?.code).to.equal('EADDRINUSE');
      // The door path it had started is stopped again (its broker removes its URL file).
      expect(existsSync(path.join(dir, 'mqtt.url'))).to.equal(false);
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
    const service = await startEmbedded(loadConfig({ DATABASE_URL: url, PORT: '0', GUESTPASS_DATA_DIR: dir, PROJECTION_WAIT_MS: '5000' }), logger);
    try {
      expect(service.demoKey).to.match(/^svc_sk_/);
      expect(service.demo?.adminPassword).to.be.a('string');
    } finally {
      await service.stop();
    }
  });
});
