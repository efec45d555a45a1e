import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { deciderSpec } from '../support/given-when-then.js';
import { doorAccessLogDecider, passDoorAccessDecider, UnknownPassError, type RecordDoorAccess } from '../../shared/domain/pass-check-in.js';
import { eventDataSchema, eventSchemas } from '../../shared/domain/event-schemas.js';
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
});

describe('door access log decider (scans that matched no pass)', () => {
  const spec = deciderSpec(doorAccessLogDecider);

  it('records each scan once', () => {
    const unknown = scan('denied', { reason: 'unknown_credential', publicId: null, passId: null });
    const event = recordedOf(unknown, null);
    spec.given([]).when(unknown).then([event]);
    spec.given([event]).when(unknown).thenNothing();
  });
});

describe('door event schemas', () => {
  const schemas = eventSchemas;

  it('validate the events the deciders produce and refuse extra fields', () => {
    const first = scan('granted');
    const [recordedEvent, checkedIn] = passDoorAccessDecider.decide(first, passDoorAccessDecider.evolve(passDoorAccessDecider.initialState(), passCreated(pass)));
    expect(() => schemas.validate('DoorAccessRecorded', 1, recordedEvent!.data)).not.to.throw();
    expect(() => schemas.validate('PassCheckedIn', 1, checkedIn!.data)).not.to.throw();
    expect(() => schemas.validate('PassCheckedIn', 1, { ...checkedIn!.data, qrValue: 'secret' })).to.throw(/invalid PassCheckedIn/);
    expect(schemas.versionOf('PassCheckedIn')).to.equal(1);
    // One catalogue answers for the door events and the rest alike.
    expect(schemas.versionOf('PassCreated')).to.equal(1);
    expect(eventDataSchema('PassCheckedIn').required).to.include('accessId');
  });
});
