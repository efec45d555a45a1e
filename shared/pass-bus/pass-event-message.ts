// The wire format of guestpass.pass-events (documented in door-gateway/README.md): one message per
// pass event, keyed by pass id, the event id in the `event-id` header, the value a JSON envelope.
import type { RecordedEvent } from '../event-store/event-store.js';
import { positionToString } from '../event-store/event-store.js';
import type { BusMessage, DeliveredMessage } from './pass-bus.js';

export const PASS_EVENT_SCHEMA = 'guestpass.pass-event.v1';

export interface PassEventEnvelope {
  readonly schema: typeof PASS_EVENT_SCHEMA;
  readonly event_id: string;
  readonly type: string;
  readonly stream_name: string;
  /** Revision of the event in its stream: strictly increasing for one pass's events. */
  readonly revision: number;
  /** Global position `commit/prepare` (informational). */
  readonly position: string;
  readonly occurred_at: string;
  /** When the store recorded the event (the latency clock of the door path starts here). */
  readonly recorded_at: string;
  readonly correlation_id: string;
  /** The event's data, minus what the door path must not carry (see OMITTED_FIELDS). */
  readonly data: Readonly<Record<string, unknown>> & { readonly passId: number };
}

/**
 * Fields never put on the topic: PassCreated's sealed guest details and PassRegistered's sealed
 * registration (name on ID, vehicle). They are useless to the door path, and a Kafka topic's
 * retention is not under the erasure rules of the event log.
 */
const OMITTED_FIELDS = new Set(['guest', 'registration']);

/** Pass lifecycle events: `Pass*` types whose data names the pass. Future pass events qualify too. */
export function isPassEvent(event: Pick<RecordedEvent, 'type' | 'data'>): boolean {
  if (!/^Pass[A-Z]/.test(event.type)) return false;
  const data = event.data as { passId?: unknown } | null;
  return typeof data === 'object' && data !== null && Number.isSafeInteger(data.passId);
}

export function toPassEventMessage(event: RecordedEvent): BusMessage {
  const data: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(event.data as Record<string, unknown>)) {
    if (!OMITTED_FIELDS.has(k)) data[k] = v;
  }
  const envelope = {
    schema: PASS_EVENT_SCHEMA,
    event_id: event.id,
    type: event.type,
    stream_name: event.streamName,
    revision: event.revision,
    position: positionToString(event.position),
    occurred_at: event.metadata.occurredAt,
    recorded_at: event.recordedAt.toISOString(),
    correlation_id: event.metadata.correlationId,
    data,
  } as PassEventEnvelope;
  return { key: String(envelope.data.passId), id: event.id, type: event.type, value: JSON.stringify(envelope) };
}

export class MalformedMessageError extends Error {
  override readonly name = 'MalformedMessageError';
}

/** Parses and checks a delivered message; throws MalformedMessageError when it is not a v1 envelope. */
export function parsePassEventMessage(message: Pick<DeliveredMessage, 'value'>): PassEventEnvelope {
  let value: unknown;
  try {
    value = JSON.parse(message.value);
  } catch {
    throw new MalformedMessageError('pass event message is not JSON');
  }
  const v = value as Partial<PassEventEnvelope> | null;
  if (
    !v ||
    v.schema !== PASS_EVENT_SCHEMA ||
    typeof v.event_id !== 'string' ||
    typeof v.type !== 'string' ||
    typeof v.stream_name !== 'string' ||
    !Number.isSafeInteger(v.revision) ||
    typeof v.recorded_at !== 'string' ||
    typeof v.data !== 'object' ||
    v.data === null ||
    !Number.isSafeInteger((v.data as { passId?: unknown }).passId)
  ) {
    throw new MalformedMessageError(`not a ${PASS_EVENT_SCHEMA} envelope`);
  }
  return v as PassEventEnvelope;
}
