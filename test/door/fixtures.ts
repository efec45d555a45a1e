// Pass events for door-path tests, built the way the command side builds them.
import { randomBytes, randomUUID } from 'node:crypto';
import type { NewEvent, RecordedEvent } from '../../shared/event-store/event-store.js';
import type { PassCreated, PassRevoked } from '../../shared/domain/events.js';
import { sha256Hex } from '../../door-gateway/contract.js';
import { schemaVersionOf } from '../../shared/domain/event-schemas.js';
import { toPassEventMessage, parsePassEventMessage, type PassEventEnvelope } from '../../shared/pass-bus/pass-event-message.js';

let nextPassId = 1_000_000 + Math.floor(Math.random() * 1_000_000);

export interface TestPass {
  readonly passId: number;
  readonly publicId: string;
  readonly orgId: number;
  readonly facilityId: number;
  readonly qrValue: string;
  readonly qrHash: string;
  readonly validFrom: string;
  readonly validUntil: string;
}

/** A pass valid from an hour ago for `hours` hours (default 2) unless a window is given. */
export function testPass(facilityId: number, window: { from?: Date; until?: Date } = {}, orgId = 1): TestPass {
  const qrValue = randomBytes(24).toString('base64url');
  const from = window.from ?? new Date(Date.now() - 3600_000);
  const until = window.until ?? new Date(Date.now() + 3600_000);
  return {
    passId: nextPassId++,
    publicId: `gst_${randomBytes(16).toString('hex')}`,
    orgId,
    facilityId,
    qrValue,
    qrHash: sha256Hex(qrValue),
    validFrom: from.toISOString(),
    validUntil: until.toISOString(),
  };
}

export function passCreated(p: TestPass, createdBy = 1): PassCreated {
  return {
    type: 'PassCreated',
    data: {
      passId: p.passId,
      publicId: p.publicId,
      orgId: p.orgId,
      facilityId: p.facilityId,
      createdBy,
      batchId: randomUUID(),
      batchSize: 1,
      arrivalDate: p.validFrom.slice(0, 10),
      arrivalTime: null,
      validFrom: p.validFrom,
      validUntil: p.validUntil,
      qrHash: p.qrHash,
      // A well-formed sealed box; nothing in the door path opens it.
      guest: {
        keyId: randomBytes(16).toString('base64url'),
        iv: randomBytes(12).toString('base64url'),
        ciphertext: randomBytes(32).toString('base64url'),
        tag: randomBytes(16).toString('base64url'),
      },
      passLinkHash: null,
    },
  };
}

export function passRevoked(p: TestPass): PassRevoked {
  return { type: 'PassRevoked', data: { passId: p.passId, publicId: p.publicId, orgId: p.orgId, facilityId: p.facilityId, qrHash: p.qrHash } };
}

/** A new event at its type's current schema version unless told otherwise. */
export function newEvent(event: { type: string; data: unknown }, schemaVersion = schemaVersionOf(event.type)): NewEvent {
  return {
    id: randomUUID(),
    type: event.type,
    data: event.data,
    metadata: {
      correlationId: randomUUID(),
      causationId: null,
      actor: { kind: 'operator' },
      occurredAt: new Date().toISOString(),
      schemaVersion,
    },
  };
}

/** A recorded event as the store would hand it to the forwarder. */
export function recorded(event: { type: string; data: unknown }, streamName: string, revision: number): RecordedEvent {
  return {
    ...newEvent(event),
    streamName,
    revision,
    position: { commit: BigInt(1000 + revision), prepare: BigInt(revision) },
    recordedAt: new Date(),
  };
}

/** The envelope the gateway would receive for an event. */
export function envelopeOf(event: { type: string; data: unknown }, streamName: string, revision: number): PassEventEnvelope {
  return parsePassEventMessage(toPassEventMessage(recorded(event, streamName, revision)));
}

export function eventually<T>(check: () => T | Promise<T>, timeoutMs = 10_000, intervalMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  return (async () => {
    let last: unknown;
    for (;;) {
      try {
        return await check();
      } catch (error) {
        last = error;
      }
      if (Date.now() > deadline) throw last;
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  })();
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
