// The wire format of guestpass.door-events (documented in door-gateway/README.md): one message per
// scan at a door, keyed by pass id (or `facility-{id}` when the scan matched no pass), the access
// id (assigned by the controller) as message id, so every hop can dedupe a redelivery.
import type { BusMessage, DeliveredMessage } from './pass-bus.js';
import { MalformedMessageError } from './pass-event-message.js';

export const DOOR_EVENT_SCHEMA = 'guestpass.door-event.v1';
export const DOOR_ACCESS_MESSAGE_TYPE = 'DoorAccess';

export type DoorAccessResult = 'granted' | 'denied';
export type DoorDenialReason = 'unknown_credential' | 'revoked' | 'expired' | 'not_yet_valid';

export interface DoorEventEnvelope {
  readonly schema: typeof DOOR_EVENT_SCHEMA;
  readonly access_id: string;
  readonly facility_id: number;
  readonly controller_id: string;
  readonly door: string;
  readonly result: DoorAccessResult;
  readonly reason: DoorDenialReason | null;
  readonly credential_id: string | null;
  readonly pass_id: number | null;
  /** Filled by the gateway from its credential records when it knows the pass. */
  readonly org_id: number | null;
  readonly stream_name: string | null;
  /** Controller clock. */
  readonly scanned_at: string;
  /** Gateway clock. */
  readonly received_at: string;
}

export function toDoorEventMessage(envelope: DoorEventEnvelope): BusMessage {
  return {
    key: envelope.pass_id !== null ? String(envelope.pass_id) : `facility-${envelope.facility_id}`,
    id: envelope.access_id,
    type: DOOR_ACCESS_MESSAGE_TYPE,
    value: JSON.stringify(envelope),
  };
}

export function parseDoorEventMessage(message: Pick<DeliveredMessage, 'value'>): DoorEventEnvelope {
  let v: Partial<DoorEventEnvelope> | null;
  try {
    v = JSON.parse(message.value) as Partial<DoorEventEnvelope> | null;
  } catch {
    throw new MalformedMessageError('door event message is not JSON');
  }
  if (
    !v ||
    v.schema !== DOOR_EVENT_SCHEMA ||
    typeof v.access_id !== 'string' ||
    !Number.isSafeInteger(v.facility_id) ||
    typeof v.controller_id !== 'string' ||
    typeof v.door !== 'string' ||
    (v.result !== 'granted' && v.result !== 'denied') ||
    typeof v.scanned_at !== 'string' ||
    (v.pass_id !== null && !Number.isSafeInteger(v.pass_id))
  ) {
    throw new MalformedMessageError(`not a ${DOOR_EVENT_SCHEMA} envelope`);
  }
  return v as DoorEventEnvelope;
}
