// The door path end to end, driven through the event store (append PassCreated / PassRevoked as
// the command side does), against the real brokers (Kafka + Mosquitto) and the embedded ones
// (in-process bus + aedes). The HTTP-level variant is in door-http.e2e.spec.ts.
import { expect } from 'chai';
import { PASS_EVENTS_TOPIC, DOOR_EVENTS_TOPIC } from '../../shared/pass-bus/pass-bus.js';
import { toPassEventMessage } from '../../shared/pass-bus/pass-event-message.js';
import { connectLink, endLink, firstConnect, publish } from '../../door-gateway/mqtt-link.js';
import { topics } from '../../door-gateway/contract.js';
import { DOOR_EVENT_SCHEMA, toDoorEventMessage } from '../../shared/pass-bus/door-event-message.js';
import type { AckObservation } from '../../door-gateway/door-gateway.js';
import type { Ack, AccessEvent } from '../../door-gateway/contract.js';
import type { ControllerSimulator } from '../../door-gateway/controller-simulator.js';
import { DoorHarness, uniqueFacilityId, type BrokerKind } from './support/door-harness.js';
import { requireKafka, requireMosquitto } from './support/door-components.js';
import { eventually, sleep, testPass, type TestPass } from './fixtures.js';

const holds = (c: ControllerSimulator, p: TestPass) => c.waitFor((x) => x.holds(p.publicId) !== undefined, 15_000, `${p.publicId} held`);
const dropped = (c: ControllerSimulator, p: TestPass) => c.waitFor((x) => x.holds(p.publicId) === undefined, 15_000, `${p.publicId} dropped`);

/** Applied acknowledgements per (controller, credential, version): more than one would be a change applied twice. */
function countApplied(controllers: readonly ControllerSimulator[]) {
  const counts = new Map<string, number>();
  for (const c of controllers) {
    c.on('ack', (ack: Ack) => {
      if (ack.op === 'sync' || !ack.applied) return;
      const key = `${c.controllerId}/${ack.credential_id}/${ack.version}/${ack.op}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    });
  }
  return counts;
}

function scenarios(kind: BrokerKind, title: string) {
  describe(`door path end to end: ${title}`, function () {
    this.timeout(60_000);
    let h: DoorHarness;
    let facility: number;

    before(async function () {
      if (kind === 'real') {
        await requireKafka(this);
        await requireMosquitto(this);
      }
      h = await DoorHarness.start({ kind, label: `door_${kind}` });
    });

    after(async () => {
      await h?.stop();
    });

    beforeEach(() => {
      facility = uniqueFacilityId();
    });

    it('a created pass opens its facility within its window and not outside it', async () => {
      const controller = await h.controller(facility);
      const pass = testPass(facility);
      await h.createPass(pass);
      await holds(controller, pass);

      expect(controller.scan({ qrValue: pass.qrValue })).to.include({ result: 'granted', reason: null, credentialId: pass.publicId });
      const before = new Date(Date.parse(pass.validFrom) - 60_000);
      const after = new Date(Date.parse(pass.validUntil) + 1);
      expect(controller.scan({ qrValue: pass.qrValue }, before)).to.include({ result: 'denied', reason: 'not_yet_valid' });
      expect(controller.scan({ qrValue: pass.qrValue }, after)).to.include({ result: 'denied', reason: 'expired' });
      expect(controller.scan({ qrValue: 'not-a-pass' })).to.include({ result: 'denied', reason: 'unknown_credential' });
      // The controller never received the QR value, only its hash.
      expect(JSON.stringify(controller.holds(pass.publicId))).not.to.include(pass.qrValue);
      // Another facility's controller does not know the pass.
      const elsewhere = await h.controller(uniqueFacilityId());
      await sleep(200);
      expect(elsewhere.scan({ qrValue: pass.qrValue }).result).to.equal('denied');
    });

    it('a revoked pass is denied, the removal is acknowledged with its latency, and late subscribers never see it', async () => {
      const controller = await h.controller(facility);
      const pass = testPass(facility);
      const acks: AckObservation[] = [];
      h.gateway!.on('ack', (a: AckObservation) => acks.push(a));
      await h.createPass(pass);
      await holds(controller, pass);
      await h.revokePass(pass);
      await dropped(controller, pass);
      expect(controller.scan({ qrValue: pass.qrValue })).to.include({ result: 'denied', reason: 'revoked' });
      await eventually(() => {
        const removal = acks.find((a) => a.credentialId === pass.publicId && a.op === 'remove' && a.controllerId === controller.controllerId);
        expect(removal?.latencyMs).to.be.a('number').and.to.be.within(0, 10_000);
      });
      await eventually(async () => {
        const rows = await h.knex('door_credential_acks').where({ credential_id: pass.publicId, op: 'remove' });
        expect(rows).to.have.length(1);
      });
      // A controller that subscribes now receives exactly the current allow-list: not the revoked pass.
      const late = await h.controller(facility);
      const other = testPass(facility);
      await h.createPass(other);
      await holds(late, other);
      expect(late.holds(pass.publicId)).to.equal(undefined);
      expect(late.scan({ qrValue: pass.qrValue }).result).to.equal('denied');
    });

    it('a controller offline during a revoke denies after reconnecting (persistent session: the revoke waited)', async () => {
      const controller = await h.controller(facility);
      const pass = testPass(facility);
      await h.createPass(pass);
      await holds(controller, pass);
      await controller.crash(); // network gone; the controller keeps its memory
      await h.revokePass(pass);
      await eventually(async () => {
        const row = await h.knex('door_credentials').where({ credential_id: pass.publicId }).first();
        expect(row?.state).to.equal('revoked');
      });
      expect(controller.scan({ qrValue: pass.qrValue }).result).to.equal('granted'); // offline: still the old list
      await controller.start();
      await dropped(controller, pass);
      expect(controller.scan({ qrValue: pass.qrValue }).result).to.equal('denied');
    });

    /** A clean-session controller holding two passes crashes; one of them is revoked while it is away. */
    async function revokedWhileAwayWithoutSession() {
      const controller = await h.controller(facility, { clean: true });
      const kept = testPass(facility);
      const revoked = testPass(facility);
      await h.createPass(kept);
      await h.createPass(revoked);
      await holds(controller, kept);
      await holds(controller, revoked);
      await controller.crash();
      await h.revokePass(revoked); // no session: neither the command nor the cleared message reach it
      return { controller, kept, revoked };
    }

    it('a controller that lost its session is resynced from its digest and denies after reconnecting', async () => {
      const { controller, kept, revoked } = await revokedWhileAwayWithoutSession();
      const added = testPass(facility);
      await h.createPass(added);
      await eventually(async () => {
        const row = await h.knex('door_credentials').where({ credential_id: added.publicId }).first();
        expect(row?.state).to.equal('active');
      });
      const resynced = new Promise<void>((resolve) => h.gateway!.once('synced', () => resolve()));
      await controller.start();
      await resynced;
      await dropped(controller, revoked);
      await holds(controller, added);
      expect(controller.digestHex).to.equal(h.gateway!.lists.digest(facility));
      expect(controller.scan({ qrValue: revoked.qrValue }).result).to.equal('denied');
      expect(controller.scan({ qrValue: kept.qrValue }).result).to.equal('granted');
    });

    it('a controller back without its session, still holding a pass revoked meanwhile, is resynced and denies it', async () => {
      // Nothing else changes while it is away, so the retained list brings it nothing new: it
      // reports the digest the gateway held just before the revoke, which is no excuse to wait.
      const { controller, kept, revoked } = await revokedWhileAwayWithoutSession();
      await eventually(async () => {
        const row = await h.knex('door_credentials').where({ credential_id: revoked.publicId }).first();
        expect(row?.state).to.equal('revoked');
      });
      await controller.start();
      await dropped(controller, revoked);
      expect(controller.digestHex).to.equal(h.gateway!.lists.digest(facility));
      expect(controller.scan({ qrValue: revoked.qrValue }).result).to.equal('denied');
      expect(controller.scan({ qrValue: kept.qrValue }).result).to.equal('granted');
    });

    it('a duplicate Kafka delivery changes nothing (versions)', async () => {
      const controller = await h.controller(facility);
      const applied = countApplied([controller]);
      const pass = testPass(facility);
      const stream = await h.createPass(pass);
      await holds(controller, pass);
      await h.revokePass(pass, stream);
      await dropped(controller, pass);
      const before = await h.knex('door_credentials').where({ credential_id: pass.publicId }).first();
      // Deliver both events again, as the forwarder would after a crash before its checkpoint.
      const events = await h.store.readStream(stream);
      const mine = events.filter((e) => (e.data as { publicId?: string }).publicId === pass.publicId);
      expect(mine).to.have.length(2);
      await h.bus.publish(PASS_EVENTS_TOPIC, mine.map(toPassEventMessage));
      await h.bus.publish(PASS_EVENTS_TOPIC, [toPassEventMessage(mine[0]!)]);
      await sleep(1000);
      expect(controller.holds(pass.publicId)).to.equal(undefined);
      const after = await h.knex('door_credentials').where({ credential_id: pass.publicId }).first();
      expect(after).to.deep.include({ version: before.version, state: 'revoked', event_id: before.event_id });
      for (const [key, n] of applied) expect(n, key).to.equal(1);
      expect(controller.scan({ qrValue: pass.qrValue }).result).to.equal('denied');
    });

    it('the first granted scan checks the pass in, once, and every scan is recorded for auditors', async () => {
      const controller = await h.controller(facility);
      const pass = testPass(facility);
      const stream = await h.createPass(pass);
      await holds(controller, pass);
      const first = controller.scan({ qrValue: pass.qrValue });
      await first.reported;
      const second = controller.scan({ qrValue: pass.qrValue });
      await second.reported;
      const unknown = controller.scan({ qrValue: 'forged' });
      await unknown.reported;
      const ofPass = async () => (await h.store.readStream(stream)).filter((e) => (e.data as { publicId?: string }).publicId === pass.publicId);
      await eventually(async () => {
        const types = (await ofPass()).map((e) => e.type);
        expect(types).to.deep.equal(['PassCreated', 'DoorAccessRecorded', 'PassCheckedIn', 'DoorAccessRecorded']);
      }, 15_000);
      const checkedIn = (await ofPass()).find((e) => e.type === 'PassCheckedIn')!;
      expect(checkedIn.data).to.include({ accessId: first.accessId, passId: pass.passId, facilityId: facility });
      // The same scan delivered again through Kafka changes nothing.
      await h.bus.publish(DOOR_EVENTS_TOPIC, [
        toDoorEventMessage({
          schema: DOOR_EVENT_SCHEMA,
          access_id: first.accessId,
          facility_id: facility,
          controller_id: controller.controllerId,
          door: 'main',
          result: 'granted',
          reason: null,
          credential_id: pass.publicId,
          pass_id: pass.passId,
          org_id: pass.orgId,
          stream_name: stream,
          scanned_at: new Date().toISOString(),
          received_at: new Date().toISOString(),
        }),
      ]);
      // The scan of an unknown QR lands in the facility's access log of the day.
      const day = new Date().toISOString().slice(0, 10);
      await eventually(async () => {
        const log = await h.store.readStream(`door-access-${facility}-${day}`);
        expect(log.map((e) => (e.data as { accessId: string }).accessId)).to.deep.equal([unknown.accessId]);
      });
      await sleep(500);
      expect((await ofPass()).map((e) => e.type)).to.deep.equal(['PassCreated', 'DoorAccessRecorded', 'PassCheckedIn', 'DoorAccessRecorded']);
    });

    it('a granted scan at an exit reader checks the guest out; every controller of the facility then drops the credential', async () => {
      const entry = await h.controller(facility);
      const exit = await h.controller(facility, { direction: 'exit' });
      const pass = testPass(facility);
      const stream = await h.createPass(pass);
      await holds(entry, pass);
      await holds(exit, pass);
      const ofPass = async () => (await h.store.readStream(stream)).filter((e) => (e.data as { publicId?: string }).publicId === pass.publicId);

      // Leaving before entering checks no one out, and does not use the pass up.
      const early = exit.scan({ qrValue: pass.qrValue });
      expect(early).to.include({ result: 'granted', direction: 'exit' });
      await early.reported;
      const first = entry.scan({ qrValue: pass.qrValue });
      await first.reported;
      await eventually(async () => expect((await ofPass()).map((e) => e.type)).to.deep.equal(['PassCreated', 'DoorAccessRecorded', 'DoorAccessRecorded', 'PassCheckedIn']), 15_000);

      const leave = exit.scan({ qrValue: pass.qrValue });
      await leave.reported;
      await dropped(entry, pass);
      await dropped(exit, pass);
      expect(entry.scan({ qrValue: pass.qrValue })).to.include({ result: 'denied', reason: 'revoked' });
      const types = (await ofPass()).map((e) => e.type);
      expect(types.slice(4, 6)).to.deep.equal(['DoorAccessRecorded', 'PassCheckedOut']);
      const checkedOut = (await ofPass()).find((e) => e.type === 'PassCheckedOut')!;
      expect(checkedOut.data).to.include({ accessId: leave.accessId, controllerId: exit.controllerId, passId: pass.passId, facilityId: facility });
      const directions = (await ofPass()).filter((e) => e.type === 'DoorAccessRecorded').slice(0, 3).map((e) => (e.data as { direction: string }).direction);
      expect(directions).to.deep.equal(['exit', 'entry', 'exit']);
      const row = await h.knex('door_credentials').where({ credential_id: pass.publicId }).first();
      expect(row).to.include({ state: 'revoked', version: checkedOut.revision });
    });

    it('a controller from before exit readers (no `direction`) is heard as an entry reader', async () => {
      const controller = await h.controller(facility);
      const pass = testPass(facility);
      const stream = await h.createPass(pass);
      await holds(controller, pass);
      const accessId = crypto.randomUUID();
      const old: Omit<AccessEvent, 'direction'> = {
        v: 1,
        access_id: accessId,
        door: 'main',
        result: 'granted',
        reason: null,
        credential_id: pass.publicId,
        pass_id: pass.passId,
        scanned_at: new Date().toISOString(),
      };
      const client = connectLink({ url: h.mqttUrl, clientId: `old-controller-${accessId.slice(0, 8)}`, clean: true });
      try {
        await firstConnect(client, 10_000);
        await publish(client, topics.controller(facility, controller.controllerId, 'access'), JSON.stringify(old), false);
      } finally {
        await endLink(client);
      }
      await eventually(async () => {
        const events = (await h.store.readStream(stream)).filter((e) => (e.data as { publicId?: string }).publicId === pass.publicId);
        expect(events.map((e) => e.type)).to.deep.equal(['PassCreated', 'DoorAccessRecorded', 'PassCheckedIn']);
        expect(events[1]!.data).to.include({ accessId, direction: 'entry' });
      }, 15_000);
    });

    it('clears a credential when valid_until passes (the controller also refuses it on its own)', async () => {
      const controller = await h.controller(facility);
      const pass = testPass(facility, { until: new Date(Date.now() + 1500) });
      await h.createPass(pass);
      await holds(controller, pass);
      expect(controller.scan({ qrValue: pass.qrValue }).result).to.equal('granted');
      await dropped(controller, pass);
      expect(Date.now()).to.be.at.least(Date.parse(pass.validUntil));
      expect(controller.scan({ qrValue: pass.qrValue })).to.include({ result: 'denied', reason: 'expired' });
      const row = await h.knex('door_credentials').where({ credential_id: pass.publicId }).first();
      expect(row.state).to.equal('expired');
      // The removal is acknowledged and recorded apart from the add (both at the add's version).
      await eventually(async () => {
        const acks = await h.knex('door_credential_acks').where({ credential_id: pass.publicId, controller_id: controller.controllerId }).orderBy('op');
        expect(acks.map((a: { op: string; version: number }) => [a.op, a.version])).to.deep.equal([
          ['remove', row.version],
          ['upsert', row.version],
        ]);
      });
    });

    // Last: the production role (gateway-role.ts), which holds the active gateway's lock, replaces
    // the harness's lone gateway, and a second process's role waits as its standby.
    it('a second gateway waits as a standby while one is active, and takes over when it stops', async () => {
      await h.gateway!.stop();
      h.gateway = null;
      const active = h.startGatewayRole('active');
      await active.firstStart;
      const controller = await h.controller(facility);
      const first = testPass(facility);
      await h.createPass(first);
      await holds(controller, first);

      const standby = h.startGatewayRole('standby');
      let started = false;
      void standby.firstActive.then(() => (started = true));
      // It asks for the active gateway's lock (a session of its own beside the holder's), having
      // connected to nothing; it never waits inside PostgreSQL (shared/db/leadership-lock.ts).
      await eventually(async () => {
        const { rows } = await h.knex.raw(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'guestpass door-gateway lock'",
        );
        expect(rows[0].n).to.equal(2);
      });
      const { rows: waiting } = await h.knex.raw(
        "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
      );
      expect(waiting[0].n, 'a lock wait inside PostgreSQL').to.equal(0);
      expect(started).to.equal(false);
      expect(standby.gateway, 'a gateway on the standby').to.equal(null);
      expect(active.active).to.equal(true);

      await active.stop();
      await standby.firstStart;
      expect(standby.gateway, 'the gateway of the standby that took over').to.not.equal(null);
      const second = testPass(facility);
      await h.createPass(second);
      await holds(controller, second);
      await h.revokePass(first);
      await dropped(controller, first);
      expect(controller.scan({ qrValue: first.qrValue })).to.include({ result: 'denied', reason: 'revoked' });
    });
  });
}

scenarios('real', 'Kafka + Mosquitto (real brokers)');
scenarios('embedded', 'in-process bus + aedes (embedded default)');
