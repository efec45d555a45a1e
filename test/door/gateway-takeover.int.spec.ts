// The door-gateway's allow-lists (what it resyncs controllers to) against its records
// (`door_credentials`), when a write landed but the gateway never heard so. Found by the
// production-topology test (test/topology/): after a kill -9 of the active gateway, the standby
// resynced the doors back to a revoked pass and without a new one, and kept them so.
//
// PostgreSQL finishes a statement whose client has died, so the killed gateway's last write can
// land after the standby got the lock and loaded its lists from the table; the batch behind it was
// never committed on the bus, so the standby receives it again and finds the records already at
// its versions. The same happens to one gateway whose write committed while the answer was lost.
// Either way the records are the truth, and the lists must follow them.
//
// Deterministic here: the standby's loadActive() answers the table as it was before the dead
// gateway's last write, and a store's save writes and then fails (the lost answer).
import { expect } from 'chai';
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { DoorHarness, uniqueFacilityId } from './support/door-harness.js';
import { testLogger } from './support/door-components.js';
import { eventually, sleep, testPass } from './fixtures.js';
import { DoorGateway } from '../../door-gateway/door-gateway.js';
import { KnexDoorCredentialStore, type DoorCredentialStore } from '../../door-gateway/credential-store.js';
import { applyPassEvent, type CredentialRecord } from '../../door-gateway/credential-state.js';
import { parsePassEventMessage, toPassEventMessage } from '../../shared/pass-bus/pass-event-message.js';
import type { ControllerSimulator } from '../../door-gateway/controller-simulator.js';

/**
 * The gateway's store, except that loadActive() answers `snapshot` when one is given (the table as
 * it was) and that a save after failNextSave() writes, then fails as if its answer were lost.
 */
function unreliable(store: DoorCredentialStore, snapshot: readonly CredentialRecord[] | null = null): DoorCredentialStore & { failNextSave(): Promise<void> } {
  let failing: (() => void) | null = null;
  return {
    load: (ids) => store.load(ids),
    save: async (records) => {
      await store.save(records);
      const landed = failing;
      if (!landed) return;
      failing = null;
      landed();
      throw new Error('connection lost after the write landed');
    },
    failNextSave: () => new Promise<void>((resolve) => (failing = resolve)),
    loadActive: async () => (snapshot ? [...snapshot] : store.loadActive()),
    recordAcks: (acks) => store.recordAcks(acks),
    recordControllerStatus: (status) => store.recordControllerStatus(status),
    recordResync: (facilityId, controllerId, at) => store.recordResync(facilityId, controllerId, at),
  };
}

describe('door-gateway takeover after a kill -9 of the active one', function () {
  this.timeout(60_000);
  let harness: DoorHarness;
  const gateways: DoorGateway[] = [];

  before(async () => {
    harness = await DoorHarness.start({ kind: 'embedded', label: 'gateway_takeover', gateway: false, reactor: false });
  });
  after(async () => {
    for (const g of gateways) await g.stop().catch(() => undefined);
    await harness?.stop();
  });

  // One gateway of the deployment at a time: each test stops its own.
  afterEach(async () => {
    for (const g of gateways.splice(0)) await g.stop().catch(() => undefined);
    for (const role of harness.gatewayRoles.splice(0)) await role.stop();
  });

  // A gateway alone, without the active gateway's lock (gateway-role.ts holds it in production):
  // the first two tests start one at a time, the store being their subject; the last runs the role.
  const gateway = (store: DoorCredentialStore, name: string) => {
    const g = new DoorGateway({
      bus: harness.bus,
      store,
      mqttUrl: harness.mqttUrl,
      logger: testLogger,
      clientId: `${name}-${randomBytes(3).toString('hex')}`,
      // Every gateway of the deployment is a member of one group: the standby gets what the
      // active one left uncommitted (and the in-process bus waits for every group it knows).
      groupId: harness.gatewayGroup,
      connectTimeoutMs: 10_000,
    });
    gateways.push(g);
    return g;
  };

  it('a standby follows the records the killed gateway wrote last, not the lists it loaded before they landed', async () => {
    const facilityId = uniqueFacilityId();
    const door = await harness.controller(facilityId);
    const table = new KnexDoorCredentialStore(harness.knex);
    const kept = testPass(facilityId);
    const added = testPass(facilityId);

    // The active gateway applies `kept`; the table then holds it active, and it stops.
    const active = gateway(table, 'gw');
    await active.start();
    const stream = await harness.createPass(kept);
    await eventually(() => expect(door.holds(kept.publicId)).to.not.equal(undefined));
    await active.stop();
    const before = await table.loadActive();

    // Its last batch, `added` created and `kept` revoked: on the bus, uncommitted, and written to
    // the table as it wrote it, after the standby loaded its lists.
    await harness.createPass(added, stream);
    await harness.revokePass(kept, stream);
    const batch = (await harness.store.readStream(stream)).slice(-2).map((e) => parsePassEventMessage(toPassEventMessage(e)));
    const records = await table.load([kept.publicId, added.publicId]);
    for (const envelope of batch) {
      const id = String((envelope.data as unknown as { publicId: string }).publicId);
      const next = applyPassEvent(records.get(id), envelope, new Date()).next;
      if (next) records.set(id, next);
    }
    await table.save([...records.values()]);

    const standby = gateway(unreliable(table, before), 'gw');
    await standby.start();
    await expectListsAndDoor(standby, door, { holds: added.publicId, dropped: kept.publicId });
  });

  it('a gateway whose write landed while its answer was lost follows the record when the batch comes again', async () => {
    const facilityId = uniqueFacilityId();
    const door = await harness.controller(facilityId);
    const store = unreliable(new KnexDoorCredentialStore(harness.knex));
    const g = gateway(store, 'gw-lost-answer');
    await g.start();
    const kept = testPass(facilityId);
    await harness.createPass(kept);
    await eventually(() => expect(door.holds(kept.publicId)).to.not.equal(undefined));

    const added = testPass(facilityId);
    const written = store.failNextSave();
    await harness.createPass(added);
    await written;
    await harness.revokePass(kept);
    await expectListsAndDoor(g, door, { holds: added.publicId, dropped: kept.publicId });
  });

  it('a standby waiting for its turn holds no snapshot: CREATE INDEX CONCURRENTLY does not wait for it, and it takes over once the active one stops', async () => {
    // The production role, as each door-gateway process runs it, asking every 200 ms.
    const active = harness.startGatewayRole('active', 200);
    await active.firstStart;
    const standby = harness.startGatewayRole('standby', 200);
    await sleep(500);
    expect(standby.active, 'the standby while the active one holds the lock').to.equal(false);
    expect(standby.gateway, 'a gateway on the standby').to.equal(null);
    // A projection rebuild builds its indexes so; it waited for a standby blocked in pg_advisory_lock.
    const sql = new pg.Client({ connectionString: harness.databaseUrl, statement_timeout: 10_000 });
    await sql.connect();
    try {
      await sql.query('CREATE INDEX CONCURRENTLY door_credentials_takeover_test ON door_credentials (org_id)');
      await sql.query('DROP INDEX door_credentials_takeover_test');
    } finally {
      await sql.end();
    }

    await active.stop();
    // Fails, rather than hangs, when the standby never takes over.
    const tookOver = await Promise.race([standby.firstStart.then(() => true), sleep(20_000).then(() => false)]);
    expect(tookOver, 'the standby took over after the active one stopped').to.equal(true);
    expect(standby.gateway, 'the gateway of the standby that took over').to.not.equal(null);
  });

  async function expectListsAndDoor(g: DoorGateway, door: ControllerSimulator, want: { holds: string; dropped: string }): Promise<void> {
    const facilityId = door.facilityId;
    await eventually(() => {
      expect(g.lists.get(facilityId, want.holds), 'the gateway lists the pass created').to.not.equal(undefined);
      expect(g.lists.get(facilityId, want.dropped), 'the gateway lists the pass revoked').to.equal(undefined);
    }, 5000);
    // After a status round (every 2 s here) the door holds what the gateway resyncs it to.
    await sleep(3000);
    await eventually(() => {
      expect(door.holds(want.holds), 'the door holds the pass created').to.not.equal(undefined);
      expect(door.holds(want.dropped), 'the door still opens for the revoked pass').to.equal(undefined);
    }, 5000);
  }
});
