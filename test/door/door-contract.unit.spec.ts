import { expect } from 'chai';
import {
  AllowListDigest,
  asAccessEvent,
  asCredential,
  asScanRequest,
  digestOf,
  parseControllerTopic,
  parseCredentialTopic,
  topics,
} from '../../door-gateway/contract.js';
import { AllowLists, applyPassEvent, expire, type CredentialRecord } from '../../door-gateway/credential-state.js';
import { isPassEvent, parsePassEventMessage, toPassEventMessage } from '../../shared/pass-bus/pass-event-message.js';
import { envelopeOf, passCreated, passRevoked, recorded, testPass } from './fixtures.js';

describe('door link contract v1', () => {
  it('builds and parses topics, and refuses ids that would break the topic tree', () => {
    expect(topics.credential(7, 'gst_ab')).to.equal('guestpass/v1/facilities/7/credentials/gst_ab');
    expect(parseCredentialTopic('guestpass/v1/facilities/7/credentials/gst_ab')).to.deep.equal({ facilityId: 7, credentialId: 'gst_ab' });
    expect(parseControllerTopic('guestpass/v1/facilities/7/controllers/door-1/acks')).to.deep.equal({ facilityId: 7, controllerId: 'door-1', leaf: 'acks' });
    expect(parseControllerTopic('guestpass/v1/facilities/7/controllers/door-1/other')).to.equal(null);
    expect(() => topics.credential(7, 'a/b')).to.throw(RangeError);
    expect(() => topics.controller(7, '+', 'status')).to.throw(RangeError);
  });

  it('digest: order-independent, updated per change, equal to the digest of the list', () => {
    const a = new AllowListDigest();
    a.add('gst_1', 1);
    a.add('gst_2', 4);
    const b = new AllowListDigest();
    b.add('gst_2', 4);
    b.add('gst_1', 1);
    expect(a.hex).to.equal(b.hex).and.to.match(/^[0-9a-f]{64}$/);
    expect(digestOf([{ credential_id: 'gst_1', version: 1 }, { credential_id: 'gst_2', version: 4 }])).to.equal(a.hex);
    a.remove('gst_2', 4);
    expect(a.hex).to.equal(digestOf([{ credential_id: 'gst_1', version: 1 }]));
    a.remove('gst_1', 1);
    expect(a.hex).to.equal('0'.repeat(64));
    // The version is part of the entry: a controller holding an older version differs.
    expect(digestOf([{ credential_id: 'gst_1', version: 2 }])).not.to.equal(digestOf([{ credential_id: 'gst_1', version: 1 }]));
  });

  it('rejects malformed payloads from the network', () => {
    expect(asCredential({ credential_id: 'gst_1', pass_id: 1, qr_sha256: 'nothex', valid_from: 'x', valid_until: 'y', version: 1 })).to.equal(null);
    expect(asAccessEvent({ access_id: 'nope', door: 'd', result: 'granted', reason: null, credential_id: null, pass_id: null, scanned_at: new Date().toISOString() })).to.equal(null);
    expect(asAccessEvent({ access_id: crypto.randomUUID(), door: 'd', result: 'denied', reason: 'because', credential_id: null, pass_id: null, scanned_at: new Date().toISOString() })).to.equal(null);
  });

  describe('access event `direction` (added within v1)', () => {
    const access = (extra: Record<string, unknown> = {}) => ({
      v: 1,
      access_id: crypto.randomUUID(),
      door: 'lobby',
      result: 'granted',
      reason: null,
      credential_id: 'gst_0123456789abcdef0123456789abcdef',
      pass_id: 42,
      scanned_at: '2026-11-21T17:00:00.000Z',
      ...extra,
    });

    it('is an entry when absent: controllers from before exit readers keep working', () => {
      const old = access();
      expect(asAccessEvent(old)).to.deep.equal({ ...old, direction: 'entry' });
    });

    it('takes `entry` and `exit`', () => {
      expect(asAccessEvent(access({ direction: 'exit' }))?.direction).to.equal('exit');
      expect(asAccessEvent(access({ direction: 'entry' }))?.direction).to.equal('entry');
      const deniedExit = asAccessEvent(access({ direction: 'exit', result: 'denied', reason: 'revoked' }));
      expect(deniedExit).to.include({ direction: 'exit', result: 'denied', reason: 'revoked' });
    });

    it('refuses any other value, as it refuses other bad fields', () => {
      for (const direction of ['Exit', 'out', 'in', '', 1, true, null, ['exit'], { exit: true }]) {
        expect(asAccessEvent(access({ direction })), JSON.stringify(direction)).to.equal(null);
      }
    });

    it('simulator scan requests may ask for an exit reader; other values are refused', () => {
      const request = { v: 1, request_id: crypto.randomUUID(), qr_sha256: 'a'.repeat(64), door: 'main', reply_to: 'guestpass/v1/simulator/scan-replies/x' };
      expect(asScanRequest(request)).to.not.equal(null);
      expect(asScanRequest({ ...request, direction: 'exit' })?.direction).to.equal('exit');
      expect(asScanRequest({ ...request, direction: 'backwards' })).to.equal(null);
    });
  });
});

describe('pass event messages', () => {
  it('are keyed by pass id, carry the event id, and never carry the sealed guest details', () => {
    const p = testPass(3);
    const event = recorded(passCreated(p), 'guest-invites-1-2026-11', 4);
    const message = toPassEventMessage(event);
    expect(message.key).to.equal(String(p.passId));
    expect(message.id).to.equal(event.id);
    expect(message.value).not.to.include('ciphertext');
    const envelope = parsePassEventMessage(message);
    expect(envelope.revision).to.equal(4);
    expect(envelope.data).to.include({ publicId: p.publicId, qrHash: p.qrHash });
  });

  it('never carry a registration sealed by the guest (PassRegistered)', () => {
    const p = testPass(3);
    const registration = { keyId: 'k1', iv: 'AAAAAAAAAAAAAAAA', ciphertext: 'c2VhbGVkLXJlZ2lzdHJhdGlvbg', tag: 'AAAAAAAAAAAAAAAAAAAAAA' };
    const data = { passId: p.passId, publicId: p.publicId, orgId: 1, facilityId: 3, batchId: crypto.randomUUID(), registration, termsAccepted: true };
    const message = toPassEventMessage(recorded({ type: 'PassRegistered', data }, 'guest-invites-1-2026-11', 5));
    expect(message.value).not.to.include('registration').and.not.to.include(registration.ciphertext);
    expect(parsePassEventMessage(message).data).to.deep.equal({ passId: p.passId, publicId: p.publicId, orgId: 1, facilityId: 3, batchId: data.batchId, termsAccepted: true });
  });

  it('selects Pass* events that name a pass, including later ones', () => {
    expect(isPassEvent({ type: 'PassCheckedIn', data: { passId: 1 } })).to.equal(true);
    expect(isPassEvent({ type: 'PassportIssued', data: { passId: 1 } })).to.equal(false);
    expect(isPassEvent({ type: 'FacilityAdded', data: { facilityId: 1 } })).to.equal(false);
  });
});

describe('credential state (gateway)', () => {
  const now = new Date();
  const stream = 'guest-invites-1-2026-11';

  it('a creation publishes the credential; a revocation removes it; versions come from the stream', () => {
    const p = testPass(5);
    const created = applyPassEvent(undefined, envelopeOf(passCreated(p), stream, 0), now);
    expect(created.next).to.include({ state: 'active', version: 0, credentialId: p.publicId, qrHash: p.qrHash });
    expect(created.actions.map((a) => a.kind)).to.deep.equal(['upsert']);
    const revoked = applyPassEvent(created.next!, envelopeOf(passRevoked(p), stream, 3), now);
    expect(revoked.next).to.include({ state: 'revoked', version: 3 });
    expect(revoked.actions).to.have.length(1);
    expect(revoked.actions[0]).to.include({ kind: 'remove', reason: 'revoked' });
  });

  it('a duplicate delivery changes nothing; an equal version re-sends the decided state', () => {
    const p = testPass(5);
    const create = envelopeOf(passCreated(p), stream, 0);
    const revoke = envelopeOf(passRevoked(p), stream, 1);
    const afterRevoke = applyPassEvent(applyPassEvent(undefined, create, now).next!, revoke, now).next!;
    // The older creation arriving again: nothing at all.
    expect(applyPassEvent(afterRevoke, create, now)).to.deep.equal({ next: null, actions: [] });
    // The revocation again (a crash before the offset commit): no state change, the removal is re-sent.
    const again = applyPassEvent(afterRevoke, revoke, now);
    expect(again.next).to.equal(null);
    expect(again.actions.map((a) => a.kind)).to.deep.equal(['remove']);
  });

  it('a pass created already expired never reaches the doors; an active one expires when due', () => {
    const old = testPass(5, { from: new Date(Date.now() - 7200_000), until: new Date(Date.now() - 3600_000) });
    const result = applyPassEvent(undefined, envelopeOf(passCreated(old), stream, 0), now);
    expect(result.next?.state).to.equal('expired');
    expect(result.actions).to.deep.equal([]);
    const p = testPass(5, { until: new Date(Date.now() + 1000) });
    const active = applyPassEvent(undefined, envelopeOf(passCreated(p), stream, 0), now).next!;
    expect(expire(active, now)).to.equal(null);
    expect(expire(active, new Date(Date.now() + 2000))).to.include({ state: 'expired', version: 0 });
  });

  it('other pass events (PassRegistered, PassCheckedIn) leave the allow-list alone', () => {
    const p = testPass(5);
    const active = applyPassEvent(undefined, envelopeOf(passCreated(p), stream, 0), now).next!;
    const ref = { passId: p.passId, publicId: p.publicId, orgId: 1, facilityId: 5 };
    const registered = envelopeOf({ type: 'PassRegistered', data: { ...ref, batchId: crypto.randomUUID(), termsAccepted: true } }, stream, 1);
    expect(applyPassEvent(active, registered, now)).to.deep.equal({ next: null, actions: [] });
    const checkIn = envelopeOf({ type: 'PassCheckedIn', data: ref }, stream, 2);
    expect(applyPassEvent(active, checkIn, now)).to.deep.equal({ next: null, actions: [] });
  });

  it('a check-out withdraws the credential from every controller of the facility, as a revocation', () => {
    const p = testPass(5);
    const active = applyPassEvent(undefined, envelopeOf(passCreated(p), stream, 0), now).next!;
    const checkOut = envelopeOf({ type: 'PassCheckedOut', data: { passId: p.passId, publicId: p.publicId, orgId: p.orgId, facilityId: 5 } }, stream, 4);
    const out = applyPassEvent(active, checkOut, now);
    // `revoked`: the only removal reason contract v1 has besides `expired` (controllers refuse others).
    expect(out.next).to.include({ state: 'revoked', version: 4, qrHash: p.qrHash, credentialId: p.publicId });
    expect(out.actions).to.have.length(1);
    expect(out.actions[0]).to.include({ kind: 'remove', reason: 'revoked' });
    // Delivered again: no state change, the removal re-sent; an older event changes nothing.
    const again = applyPassEvent(out.next!, checkOut, now);
    expect(again.next).to.equal(null);
    expect(again.actions.map((a) => a.kind)).to.deep.equal(['remove']);
    expect(applyPassEvent(out.next!, envelopeOf(passCreated(p), stream, 0), now)).to.deep.equal({ next: null, actions: [] });
  });

  it('allow-lists keep a digest per facility and remember recent ones', () => {
    const lists = new AllowLists(60_000);
    const p = testPass(9);
    const q = testPass(9);
    const rec = (x: typeof p, version: number, state: CredentialRecord['state'] = 'active'): CredentialRecord => ({
      credentialId: x.publicId,
      facilityId: 9,
      passId: x.passId,
      orgId: 1,
      streamName: stream,
      qrHash: x.qrHash,
      validFrom: x.validFrom,
      validUntil: x.validUntil,
      version,
      state,
      eventId: crypto.randomUUID(),
      eventAt: now.toISOString(),
    });
    lists.set(rec(p, 0));
    const afterOne = lists.digest(9);
    lists.set(rec(q, 0));
    expect(lists.digest(9)).to.equal(digestOf([{ credential_id: p.publicId, version: 0 }, { credential_id: q.publicId, version: 0 }]));
    lists.set(rec(p, 1, 'revoked'));
    expect(lists.count(9)).to.equal(1);
    expect(lists.recentlyHad(9, afterOne)).to.equal(true);
    expect(lists.recentlyHad(9, '1'.repeat(64))).to.equal(false);
  });
});
