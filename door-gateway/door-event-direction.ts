// The scan's direction on guestpass.door-events: an optional `direction` beside the fields of the
// guestpass.door-event.v1 envelope (shared/pass-bus/door-event-message.ts), added within v1 like
// the MQTT access event's own `direction`. The gateway always writes it; a message without it
// (written before exit readers, or by an older gateway) is an entry.
import type { DoorEventEnvelope } from '../shared/pass-bus/door-event-message.js';
import type { AccessDirection } from './contract.js';

export type DirectedDoorEventEnvelope = DoorEventEnvelope & { readonly direction: AccessDirection };

/** `exit` only when the message says so; anything else (absent, unknown) counts as an entry, which checks no one out. */
export function directionOf(envelope: DoorEventEnvelope): AccessDirection {
  return (envelope as Partial<DirectedDoorEventEnvelope>).direction === 'exit' ? 'exit' : 'entry';
}
