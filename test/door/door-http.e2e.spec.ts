// The door path behind the real HTTP API (test/support/stack.ts): a pass created with
// POST /api/v1/org/passes opens its facility's door, DELETE closes it, and the first granted scan
// shows as `checked_in` in the API. Against the real brokers and the embedded ones.
import { expect } from 'chai';
import { startStack, passBody, type Stack, type Tenant } from '../support/stack.js';
import type { ControllerSimulator } from '../../door-gateway/controller-simulator.js';
import { DoorHarness, type BrokerKind } from './support/door-harness.js';
import { requireKafka, requireMosquitto } from './support/door-components.js';
import { eventually } from './fixtures.js';

for (const [kind, title] of [
  ['real', 'Kafka + Mosquitto'],
  ['embedded', 'in-process bus + aedes'],
] as Array<[BrokerKind, string]>) {
  describe(`door path behind the organization API: ${title}`, function () {
    this.timeout(60_000);
    let stack: Stack;
    let tenant: Tenant;
    let door: DoorHarness;
    let controller: ControllerSimulator;

    before(async function () {
      if (kind === 'real') {
        await requireKafka(this);
        await requireMosquitto(this);
      }
      stack = await startStack({ label: `door_http_${kind}` });
      tenant = await stack.seed.tenant();
      door = await DoorHarness.start({
        kind,
        label: `door_http_${kind}`,
        database: { url: stack.databaseUrl, knex: stack.db, store: stack.store },
      });
      controller = await door.controller(tenant.facilityId);
    });

    after(async () => {
      await door?.stop();
      await stack?.stop();
    });

    async function createPass(): Promise<{ publicId: string; qrValue: string }> {
      const today = new Date().toISOString().slice(0, 10);
      const res = await stack.request('POST', '/api/v1/org/passes', { apiKey: tenant.apiKey, json: passBody(tenant.facilityId, { arrival_date: today }) });
      expect(res.status, res.text).to.equal(201);
      return { publicId: res.body.public_id, qrValue: res.body.qr_value };
    }

    it('POST opens the door for the QR value, DELETE closes it', async () => {
      const used = await createPass();
      await controller.waitFor((c) => c.holds(used.publicId) !== undefined, 15_000, 'credential');
      expect(controller.scan({ qrValue: used.qrValue }).result).to.equal('granted');

      // A granted scan checks its pass in (revoking it is then a 409, next test): revoke an unused one.
      const pass = await createPass();
      await controller.waitFor((c) => c.holds(pass.publicId) !== undefined, 15_000, 'credential');
      const res = await stack.request('DELETE', `/api/v1/org/passes/${pass.publicId}`, { apiKey: tenant.apiKey });
      expect(res.status).to.equal(200);
      const answered = Date.now();
      await controller.waitFor((c) => c.holds(pass.publicId) === undefined, 15_000, 'revocation');
      expect(Date.now() - answered).to.be.below(5000);
      expect(controller.scan({ qrValue: pass.qrValue })).to.include({ result: 'denied', reason: 'revoked' });
    });

    it('the first granted scan shows the pass as checked_in in the API', async () => {
      const pass = await createPass();
      await controller.waitFor((c) => c.holds(pass.publicId) !== undefined, 15_000, 'credential');
      await controller.scan({ qrValue: pass.qrValue }).reported;
      await eventually(async () => {
        const list = await stack.request('GET', '/api/v1/org/passes', { apiKey: tenant.apiKey });
        const row = (list.body.items as Array<{ public_id: string; status: string }>).find((p) => p.public_id === pass.publicId);
        expect(row?.status).to.equal('checked_in');
      }, 15_000);
      const res = await stack.request('DELETE', `/api/v1/org/passes/${pass.publicId}`, { apiKey: tenant.apiKey });
      expect(res.status).to.equal(409);
    });
  });
}
