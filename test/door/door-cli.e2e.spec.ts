// `guestpass door simulate|scan` and the embedded default (startDoorPath with no KAFKA_BROKERS and
// no MQTT_URL): a newcomer creates a pass and scans it at once. Then check-out at an exit reader
// (`door scan --exit`) through the running service: the organization API shows the pass
// `checked_out`, and its QR opens no entry door again.
import { expect } from 'chai';
import os from 'node:os';
import path from 'node:path';
import { mkdtemp, rm } from 'node:fs/promises';
import { doorCommand, type DoorCliIo } from '../../cli/door.js';
import { startDoorPath, type DoorPath } from '../../door-gateway/embedded.js';
import type { ControllerSimulator } from '../../door-gateway/controller-simulator.js';
import { startStack, passBody, type Stack, type Tenant } from '../support/stack.js';
import { migratedDatabase } from '../support/database.js';
import { type Knex } from '../../shared/db/knex.js';
import { createEventStore } from '../../shared/event-store/create-event-store.js';
import type { EventStore } from '../../shared/event-store/event-store.js';
import { eventSchemas } from '../../shared/domain/event-schemas.js';
import { DoorHarness, uniqueFacilityId } from './support/door-harness.js';
import { MOSQUITTO_URL, requireKafka, requireMosquitto, testLogger } from './support/door-components.js';
import { eventually, newEvent, passCreated, passRevoked, testPass } from './fixtures.js';

function capture(until?: Promise<void>): DoorCliIo & { lines: string[]; errors: string[] } {
  const lines: string[] = [];
  const errors: string[] = [];
  return { lines, errors, out: (l) => lines.push(l), err: (l) => errors.push(l), ...(until ? { until } : {}) };
}

describe('embedded door path and the door CLI (aedes, in-process bus)', function () {
  this.timeout(60_000);
  let dataDir: string;
  let knex: Knex;
  let store: EventStore;
  let door: DoorPath;
  const facility = uniqueFacilityId();
  const pass = testPass(facility);
  const stream = 'guest-invites-1-cli';

  before(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'gp-door-cli-'));
    const migrated = await migratedDatabase('door_cli');
    const url = migrated.url;
    knex = migrated.knex;
    store = createEventStore({ databaseUrl: url, eventStoreUrl: null, schemas: eventSchemas });
    door = await startDoorPath(
      { store, knex, logger: testLogger, config: { kafkaBrokers: [], kafkaPassTopicPartitions: 1, mqttUrl: null, dataDir } },
      { facilityPollMs: 100 },
    );
  });

  after(async () => {
    await door?.stop();
    await store?.close();
    await knex?.destroy();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('starts one simulated controller per facility and answers `door scan` through the embedded broker', async () => {
    expect(door.bus.kind).to.equal('in-process');
    expect(door.broker).not.to.equal(null);
    await store.appendToStream(stream, [newEvent(passCreated(pass))], 'any');
    await eventually(() => expect(door.controllers.get(facility)?.[0]?.holds(pass.publicId)).to.not.equal(undefined), 10_000);

    const io = capture();
    expect(await doorCommand(['scan', '--facility', String(facility), `--qr=${pass.qrValue}`], { mqttUrl: null, dataDir }, io)).to.equal(0);
    expect(io.lines).to.deep.equal([`granted (controller sim-${facility}-1)`]);

    const json = capture();
    await doorCommand(['scan', '--facility', String(facility), '--qr', 'nope', '--json'], { mqttUrl: null, dataDir }, json);
    expect(JSON.parse(json.lines[0]!)).to.include({ result: 'denied', reason: 'unknown_credential', controller_id: `sim-${facility}-1` });
  });

  it('`door simulate` runs more controllers until stopped; they follow revocations', async () => {
    let stop!: () => void;
    const io = capture(new Promise<void>((resolve) => (stop = resolve)));
    const running = doorCommand(['simulate', '--facility', String(facility), '--controllers', '2', '--json'], { mqttUrl: null, dataDir }, io);
    await eventually(() => expect(io.lines).to.have.length(1));
    expect(JSON.parse(io.lines[0]!)).to.deep.include({ facility_id: facility, controllers: [`cli-${facility}-1`, `cli-${facility}-2`] });

    const scan = async () => {
      const out = capture();
      await doorCommand(['scan', '--facility', String(facility), `--qr=${pass.qrValue}`, '--controller', `cli-${facility}-2`, '--json'], { mqttUrl: null, dataDir }, out);
      return JSON.parse(out.lines[0]!);
    };
    await eventually(async () => expect(await scan()).to.include({ result: 'granted', controller_id: `cli-${facility}-2` }));
    await store.appendToStream(stream, [newEvent(passRevoked(pass))], 'any');
    await eventually(async () => expect(await scan()).to.include({ result: 'denied', reason: 'revoked' }));
    stop();
    expect(await running).to.equal(0);
  });

  it('says what is wrong: no broker (exit 1), bad usage (exit 2)', async () => {
    const empty = await mkdtemp(path.join(os.tmpdir(), 'gp-door-none-'));
    try {
      const io = capture();
      expect(await doorCommand(['scan', '--facility', '1', '--qr', 'x'], { mqttUrl: null, dataDir: empty }, io)).to.equal(1);
      expect(io.errors.join('\n')).to.match(/no MQTT broker/);
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
    const usage = capture();
    expect(await doorCommand(['scan', '--facility', 'abc'], { mqttUrl: null, dataDir }, usage)).to.equal(2);
    expect(usage.errors.join('\n')).to.match(/usage:/);
    const noController = capture();
    expect(await doorCommand(['scan', '--facility', String(uniqueFacilityId()), '--qr', 'x'], { mqttUrl: null, dataDir }, noController)).to.equal(1);
    expect(noController.errors.join('\n')).to.match(/no simulated controller is online/);
  });
});

describe('door CLI against Mosquitto', function () {
  this.timeout(90_000);
  let h: DoorHarness;

  before(async function () {
    await requireKafka(this);
    await requireMosquitto(this);
    h = await DoorHarness.start({ kind: 'real', label: 'door_cli_real', reactor: false });
  });

  after(async () => {
    await h?.stop();
  });

  it('simulate + scan: granted within the window, then denied after revocation', async () => {
    const facility = uniqueFacilityId();
    h.facilities.add(facility);
    const pass = testPass(facility);
    let stop!: () => void;
    const sim = capture(new Promise<void>((resolve) => (stop = resolve)));
    const running = doorCommand(['simulate', '--facility', String(facility)], { mqttUrl: MOSQUITTO_URL, dataDir: os.tmpdir() }, sim);
    await eventually(() => expect(sim.lines.length).to.be.greaterThan(0));
    await h.createPass(pass);
    const scan = async () => {
      const io = capture();
      await doorCommand(['scan', '--facility', String(facility), `--qr=${pass.qrValue}`], { mqttUrl: MOSQUITTO_URL, dataDir: os.tmpdir() }, io);
      return io.lines[0] ?? io.errors.join('\n'); // a failed scan shows why
    };
    // Each scan may wait its 5 s answer timeout while the gateway catches up on a busy machine.
    await eventually(async () => expect(await scan()).to.equal(`granted (controller cli-${facility}-1)`), 30_000);
    await h.revokePass(pass);
    await eventually(async () => expect(await scan()).to.equal(`denied: revoked (controller cli-${facility}-1)`), 30_000);
    stop();
    expect(await running).to.equal(0);
  });
});

/**
 * A guest enters, leaves through an exit reader, and is kept out afterwards, driven as an operator
 * would: POST /api/v1/org/passes, `door scan`, `door scan --exit`, GET /api/v1/org/passes.
 */
async function checkOutThroughTheService(env: {
  stack: Stack;
  tenant: Tenant;
  controller: ControllerSimulator;
  cli: { mqttUrl: string | null; dataDir: string };
  /** Extra `door scan` arguments (`--controller ID` where several simulators run). */
  scanArgs: string[];
}): Promise<void> {
  const { stack, tenant, controller } = env;
  const today = new Date().toISOString().slice(0, 10);
  const created = await stack.request('POST', '/api/v1/org/passes', { apiKey: tenant.apiKey, json: passBody(tenant.facilityId, { arrival_date: today }) });
  expect(created.status, created.text).to.equal(201);
  const { public_id: publicId, qr_value: qrValue } = created.body as { public_id: string; qr_value: string };
  const statusInApi = async () => {
    const list = await stack.request('GET', '/api/v1/org/passes', { apiKey: tenant.apiKey });
    return (list.body.items as Array<{ public_id: string; status: string }>).find((p) => p.public_id === publicId)?.status;
  };
  const scan = async (...extra: string[]) => {
    const io = capture();
    const args = ['scan', '--facility', String(tenant.facilityId), `--qr=${qrValue}`, ...env.scanArgs, ...extra, '--json'];
    const code = await doorCommand(args, env.cli, io);
    expect(code, io.lines.join('\n') + io.errors.join('\n')).to.equal(0);
    return JSON.parse(io.lines[0]!) as { result: string; reason: string | null; direction: string; access_id: string; controller_id: string };
  };

  await controller.waitFor((c) => c.holds(publicId) !== undefined, 15_000, 'credential');
  const entry = await scan();
  expect(entry).to.include({ result: 'granted', reason: null, direction: 'entry', controller_id: controller.controllerId });
  await eventually(async () => expect(await statusInApi()).to.equal('checked_in'), 15_000);

  const exit = await scan('--exit');
  expect(exit).to.include({ result: 'granted', reason: null, direction: 'exit', controller_id: controller.controllerId });
  await eventually(async () => expect(await statusInApi()).to.equal('checked_out'), 15_000);

  // The gateway withdraws the credential from the facility's controllers: the next entry is denied.
  await controller.waitFor((c) => c.holds(publicId) === undefined, 15_000, 'withdrawal');
  const again = await scan();
  expect(again).to.include({ result: 'denied', reason: 'revoked', direction: 'entry' });
  const credential = await stack.db('door_credentials').where({ credential_id: publicId }).first();
  expect(credential?.state).to.equal('revoked');

  // The log tells it all: who entered and left through which scan, and the scan kept out.
  const { stream_name: stream } = await stack.db('pass_list').where({ public_id: publicId }).first<{ stream_name: string }>('stream_name');
  await eventually(async () => {
    const ofPass = (await stack.store.readStream(stream)).filter((e) => (e.data as { publicId?: string }).publicId === publicId);
    expect(ofPass.map((e) => e.type)).to.deep.equal([
      'PassCreated',
      'DoorAccessRecorded',
      'PassCheckedIn',
      'DoorAccessRecorded',
      'PassCheckedOut',
      'DoorAccessRecorded',
    ]);
    const scans = ofPass.filter((e) => e.type === 'DoorAccessRecorded').map((e) => e.data as { accessId: string; direction: string; result: string });
    expect(scans.map((d) => [d.accessId, d.direction, d.result])).to.deep.equal([
      [entry.access_id, 'entry', 'granted'],
      [exit.access_id, 'exit', 'granted'],
      [again.access_id, 'entry', 'denied'],
    ]);
    expect(ofPass.find((e) => e.type === 'PassCheckedOut')!.data).to.include({ accessId: exit.access_id, facilityId: tenant.facilityId });
  }, 15_000);
  expect(await statusInApi()).to.equal('checked_out');
}

describe('check-out at an exit reader through the running service (embedded default: aedes, in-process bus)', function () {
  this.timeout(90_000);
  let dataDir: string;
  let stack: Stack;
  let tenant: Tenant;
  let door: DoorPath;

  before(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'gp-door-exit-'));
    stack = await startStack({ label: 'door_exit_embedded' });
    tenant = await stack.seed.tenant();
    // As `npm start` composes it: one simulated controller per active facility, the broker's URL
    // in the data folder for the CLI.
    door = await startDoorPath(
      { store: stack.store, knex: stack.db, logger: testLogger, config: { kafkaBrokers: [], kafkaPassTopicPartitions: 1, mqttUrl: null, dataDir } },
      { facilityPollMs: 100 },
    );
  });

  after(async () => {
    await door?.stop();
    await stack?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('entry checks in, `door scan --exit` checks out (GET shows checked_out), then the QR is denied at the entry', async () => {
    await eventually(() => expect(door.controllers.get(tenant.facilityId)).to.have.length(1), 10_000);
    const controller = door.controllers.get(tenant.facilityId)![0]!;
    await checkOutThroughTheService({ stack, tenant, controller, cli: { mqttUrl: null, dataDir }, scanArgs: [] });
  });
});

describe('check-out at an exit reader through the running service (Kafka + Mosquitto)', function () {
  this.timeout(90_000);
  let stack: Stack;
  let tenant: Tenant;
  let h: DoorHarness;

  before(async function () {
    await requireKafka(this);
    await requireMosquitto(this);
    stack = await startStack({ label: 'door_exit_real' });
    tenant = await stack.seed.tenant();
    h = await DoorHarness.start({ kind: 'real', label: 'door_exit_real', database: { url: stack.databaseUrl, knex: stack.db, store: stack.store } });
  });

  after(async () => {
    await h?.stop();
    await stack?.stop();
  });

  it('entry checks in, `door scan --exit` checks out (GET shows checked_out), then the QR is denied at the entry', async () => {
    const controller = await h.controller(tenant.facilityId);
    await checkOutThroughTheService({
      stack,
      tenant,
      controller,
      cli: { mqttUrl: MOSQUITTO_URL, dataDir: os.tmpdir() },
      scanArgs: ['--controller', controller.controllerId],
    });
  });
});
