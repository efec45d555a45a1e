import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { deciderSpec } from '../support/given-when-then.js';
import { fold } from '../../shared/domain/decider.js';
import { doorAccessLogDecider, passDoorAccessDecider, UnknownPassError, type RecordDoorAccess } from '../../shared/domain/pass-check-in.js';
import { eventDataSchema, eventSchemas } from '../../shared/domain/event-schemas.js';
import type { PassRegistered } from '../../shared/domain/events.js';
import { passCreated, passRevoked, testPass } from './fixtures.js';

const facilityId = 12;
const pass = testPass(facilityId, {}, 4);

function scan(result: 'granted' | 'denied', overrides: Partial<RecordDoorAccess['data']> = {}): RecordDoorAccess {
  return {
    type: 'RecordDoorAccess',
    data: {
      accessId: randomUUID(),
      facilityId,
      controllerId: 'door-1',
      door: 'main',
      direction: 'entry',
      result,
      reason: result === 'granted' ? null : 'revoked',
      publicId: pass.publicId,
      passId: pass.passId,
      scannedAt: '2026-11-21T10:00:00.000Z',
      receivedAt: '2026-11-21T10:00:00.100Z',
      ...overrides,
    },
  };
}

function recordedOf(command: RecordDoorAccess, orgId: number | null = pass.orgId) {
  const d = command.data;
  return {
    type: 'DoorAccessRecorded' as const,
    data: {
      accessId: d.accessId,
      facilityId: d.facilityId,
      orgId,
      controllerId: d.controllerId,
      door: d.door,
      direction: d.direction,
      result: d.result,
      reason: d.result === 'granted' ? null : d.reason,
      passId: d.passId,
      publicId: d.publicId,
      scannedAt: d.scannedAt,
      receivedAt: d.receivedAt,
    },
  };
}

function checkedInOf(command: RecordDoorAccess) {
  return {
    type: 'PassCheckedIn' as const,
    data: {
      passId: pass.passId,
      publicId: pass.publicId,
      orgId: pass.orgId,
      facilityId,
      accessId: command.data.accessId,
      controllerId: 'door-1',
      door: 'main',
      checkedInAt: command.data.scannedAt,
    },
  };
}

/** A scan at an exit reader. */
function exitScan(result: 'granted' | 'denied', overrides: Partial<RecordDoorAccess['data']> = {}): RecordDoorAccess {
  return scan(result, { controllerId: 'exit-1', door: 'lobby', direction: 'exit', ...overrides });
}

function checkedOutOf(command: RecordDoorAccess) {
  return {
    type: 'PassCheckedOut' as const,
    data: {
      passId: pass.passId,
      publicId: pass.publicId,
      orgId: pass.orgId,
      facilityId,
      accessId: command.data.accessId,
      controllerId: command.data.controllerId,
      door: command.data.door,
      checkedOutAt: command.data.scannedAt,
    },
  };
}

function passRegistered(): PassRegistered {
  return {
    type: 'PassRegistered',
    data: {
      passId: pass.passId,
      publicId: pass.publicId,
      orgId: pass.orgId,
      facilityId,
      batchId: randomUUID(),
      registration: { keyId: 'k1', iv: 'AAAAAAAAAAAAAAAA', ciphertext: 'AAAA', tag: 'AAAAAAAAAAAAAAAAAAAAAA' },
      termsAccepted: true,
    },
  };
}

/** The pass after its first granted entry. */
function checkedIn() {
  const entry = scan('granted');
  return [passCreated(pass), recordedOf(entry), checkedInOf(entry)];
}

describe('pass check-in decider (door access on the pass stream)', () => {
  const spec = deciderSpec(passDoorAccessDecider);

  it('the first granted entry of an expected pass records the scan and checks the pass in', () => {
    const first = scan('granted');
    spec.given([passCreated(pass)]).when(first).then([recordedOf(first), checkedInOf(first)]);
  });

  it('a second granted entry is recorded but checks in nothing', () => {
    const first = scan('granted');
    const second = scan('granted');
    spec
      .given([passCreated(pass), recordedOf(first), checkedInOf(first)])
      .when(second)
      .then([recordedOf(second)]);
  });

  it('the same scan delivered again changes nothing', () => {
    const first = scan('granted');
    spec.given([passCreated(pass), recordedOf(first), checkedInOf(first)]).when(first).thenNothing();
    const denied = scan('denied');
    spec.given([passCreated(pass), recordedOf(denied)]).when(denied).thenNothing();
  });

  it('a granted scan of a cancelled pass (revocation not yet at that door) is recorded for auditors, no check-in', () => {
    const late = scan('granted');
    spec.given([passCreated(pass), passRevoked(pass)]).when(late).then([recordedOf(late)]);
  });

  it('a denied scan is recorded and moves nothing', () => {
    const denied = scan('denied', { reason: 'expired' });
    spec.given([passCreated(pass)]).when(denied).then([recordedOf(denied)]);
  });

  it('a grant at another facility does not check the pass in', () => {
    const elsewhere = scan('granted', { facilityId: facilityId + 1 });
    spec.given([passCreated(pass)]).when(elsewhere).then([recordedOf(elsewhere)]);
  });

  it('a pass that is not in the stream is an UnknownPassError (the reactor logs the scan per facility)', () => {
    spec.given([]).when(scan('granted')).thenThrows(UnknownPassError);
  });

  it('a registered pass (the guest confirmed the visit) still opens doors: its first granted entry checks it in', () => {
    const first = scan('granted');
    spec.given([passCreated(pass), passRegistered()]).when(first).then([recordedOf(first), checkedInOf(first)]);
  });
});

describe('pass check-out decider (scans at exit readers)', () => {
  const spec = deciderSpec(passDoorAccessDecider);

  it('a granted exit of a checked-in pass records the scan and checks the pass out', () => {
    const exit = exitScan('granted');
    spec.given(checkedIn()).when(exit).then([recordedOf(exit), checkedOutOf(exit)]);
  });

  it('a registered pass checked in and out goes registered -> checked_in -> checked_out', () => {
    const entry = scan('granted');
    const exit = exitScan('granted');
    spec
      .given([passCreated(pass), passRegistered(), recordedOf(entry), checkedInOf(entry)])
      .when(exit)
      .thenInspect((events, state) => {
        expect(events).to.deep.equal([recordedOf(exit), checkedOutOf(exit)]);
        expect(state.passes.get(pass.publicId)?.status).to.equal('checked_out');
      });
  });

  it('an exit of a pass that never checked in (expected, registered) is only recorded, and the pass stays usable', () => {
    const exit = exitScan('granted');
    spec.given([passCreated(pass)]).when(exit).then([recordedOf(exit)]);
    spec.given([passCreated(pass), passRegistered()]).when(exit).then([recordedOf(exit)]);
    // The exit did not use the pass up: the next entry checks it in.
    const entry = scan('granted');
    spec.given([passCreated(pass), passRegistered(), recordedOf(exit)]).when(entry).then([recordedOf(entry), checkedInOf(entry)]);
  });

  it('an exit of a cancelled or already checked-out pass is only recorded', () => {
    const exit = exitScan('granted');
    spec.given([passCreated(pass), passRevoked(pass)]).when(exit).then([recordedOf(exit)]);
    const first = exitScan('granted');
    spec
      .given([...checkedIn(), recordedOf(first), checkedOutOf(first)])
      .when(exit)
      .then([recordedOf(exit)]);
  });

  it('a denied exit, or a granted exit at another facility, checks no one out', () => {
    const denied = exitScan('denied', { reason: 'expired' });
    spec.given(checkedIn()).when(denied).then([recordedOf(denied)]);
    const elsewhere = exitScan('granted', { facilityId: facilityId + 1 });
    spec.given(checkedIn()).when(elsewhere).then([recordedOf(elsewhere)]);
  });

  it('the same exit scan delivered again changes nothing', () => {
    const exit = exitScan('granted');
    spec
      .given([...checkedIn(), recordedOf(exit), checkedOutOf(exit)])
      .when(exit)
      .thenNothing();
  });

  it('an entry of a checked-out pass (withdrawal not yet at that door) is recorded and checks nothing in', () => {
    const exit = exitScan('granted');
    const late = scan('granted');
    spec
      .given([...checkedIn(), recordedOf(exit), checkedOutOf(exit)])
      .when(late)
      .thenInspect((events, state) => {
        expect(events).to.deep.equal([recordedOf(late)]);
        expect(state.passes.get(pass.publicId)?.status).to.equal('checked_out');
      });
  });
});

describe('door access log decider (scans that matched no pass)', () => {
  const spec = deciderSpec(doorAccessLogDecider);

  it('records each scan once, with its direction', () => {
    const unknown = scan('denied', { reason: 'unknown_credential', publicId: null, passId: null });
    const event = recordedOf(unknown, null);
    spec.given([]).when(unknown).then([event]);
    spec.given([event]).when(unknown).thenNothing();
    const atExit = exitScan('denied', { reason: 'unknown_credential', publicId: null, passId: null });
    spec.given([event]).when(atExit).then([recordedOf(atExit, null)]);
  });
});

describe('door event schemas', () => {
  const schemas = eventSchemas;

  it('validate the events the deciders produce and refuse extra fields', () => {
    const first = scan('granted');
    const [recordedEvent, checkIn] = passDoorAccessDecider.decide(first, passDoorAccessDecider.evolve(passDoorAccessDecider.initialState(), passCreated(pass)));
    expect(() => schemas.validate('DoorAccessRecorded', 2, recordedEvent!.data)).not.to.throw();
    expect(() => schemas.validate('PassCheckedIn', 1, checkIn!.data)).not.to.throw();
    expect(() => schemas.validate('PassCheckedIn', 1, { ...checkIn!.data, qrValue: 'secret' })).to.throw(/invalid PassCheckedIn/);
    expect(schemas.versionOf('PassCheckedIn')).to.equal(1);
    // One catalogue answers for the door events and the rest alike.
    expect(schemas.versionOf('PassRevoked')).to.equal(1);
    expect(eventDataSchema('PassCheckedIn').required).to.include('accessId');

    const exit = exitScan('granted');
    const events = passDoorAccessDecider.decide(exit, fold(passDoorAccessDecider, checkedIn()));
    expect(events.map((e) => e.type)).to.deep.equal(['DoorAccessRecorded', 'PassCheckedOut']);
    for (const e of events) expect(() => schemas.validate(e.type, schemas.versionOf(e.type), e.data), e.type).not.to.throw();
    expect(() => schemas.validate('PassCheckedOut', 1, { ...events[1]!.data, qrHash: pass.qrHash })).to.throw(/invalid PassCheckedOut/);
  });

  it('DoorAccessRecorded v2 carries the direction; v1 (no direction) is read as an entry', () => {
    expect(schemas.versionOf('DoorAccessRecorded')).to.equal(2);
    const { direction: _direction, ...v1 } = recordedOf(scan('granted')).data;
    expect(() => schemas.validate('DoorAccessRecorded', 1, v1)).not.to.throw();
    expect(() => schemas.validate('DoorAccessRecorded', 2, v1)).to.throw(/direction/);
    expect(() => schemas.validate('DoorAccessRecorded', 1, { ...v1, direction: 'exit' })).to.throw(/additional properties/);
    expect(() => schemas.validate('DoorAccessRecorded', 2, { ...v1, direction: 'sideways' })).to.throw(/direction/);
    const upcast = schemas.upcast('DoorAccessRecorded', 1, v1);
    expect(upcast).to.deep.equal({ schemaVersion: 2, data: { ...v1, direction: 'entry' } });
    expect(() => schemas.validate('DoorAccessRecorded', 2, upcast.data)).not.to.throw();
  });
});

