// A leaf of the audit tree: one event of the log, as stored (never upcast: a later upcaster must
// not change an old leaf), serialized with RFC 8785 (JCS) by the `canonicalize` package, so any
// verifier in any language gets the same bytes from the same fields.
import canonicalize from 'canonicalize';
import { positionToString, type RecordedEvent } from '../event-store/event-store.js';
import { leafHashOfText } from './merkle-hash.js';

/** The fields a leaf commits to, in the JSON an export carries them in. */
export interface CanonicalEvent {
  readonly position: string;
  readonly stream: string;
  readonly revision: number;
  readonly id: string;
  readonly type: string;
  readonly data: unknown;
  readonly metadata: unknown;
  readonly recorded_at: string;
}

export function canonicalEvent(event: RecordedEvent): CanonicalEvent {
  return {
    position: positionToString(event.position),
    stream: event.streamName,
    revision: event.revision,
    id: event.id,
    type: event.type,
    data: event.data,
    metadata: event.metadata,
    recorded_at: event.recordedAt.toISOString(),
  };
}

/** The JCS text of an event's canonical fields. */
export function canonicalText(event: CanonicalEvent): string {
  const text = canonicalize(event);
  if (text === undefined) throw new Error(`event ${event.id} has no JSON form`);
  return text;
}

/** SHA-256(0x00 || JCS(event)). */
export function eventLeafHash(event: CanonicalEvent): Buffer {
  return leafHashOfText(canonicalText(event));
}
