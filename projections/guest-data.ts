// Opens PassCreated's sealed guest data for the projections that read it. A destroyed (or
// unknown) key gives `guest: null`: the guest was erased, and the read model keeps no names.
// Sealed text never passed the log's own checks (jsonb holds no NUL), and events written before
// requests were checked for it may hold text PostgreSQL cannot store: it is made storable here,
// or such a pass would stop its read models for good.
import type { GuestDetails, PassCreated } from '../shared/domain/events.js';
import type { RecordedEvent } from '../shared/event-store/event-store.js';
import type { SubjectKeyStore } from '../shared/crypto/subject-keys.js';
import { open } from '../shared/crypto/sealed-box.js';
import { isStorableText, storableText } from '../shared/db/storable-text.js';
import type { ProjectionEvent } from './projection.js';

/** A sealed box that does not open under its own key: a defect, never an erasure. */
export class GuestDataError extends Error {
  override readonly name = 'GuestDataError';
  constructor(
    readonly eventId: string,
    override readonly cause: unknown,
  ) {
    super(`cannot open the guest data of event ${eventId}: ${cause instanceof Error ? cause.message : String(cause)}`);
  }
}

/**
 * Events as projections see them. With `open` false, PassCreated events keep no guest data
 * (`guest: null`), for batches no guest-reading projection needs. One key-store query per call.
 */
export async function openGuestData(
  events: readonly RecordedEvent[],
  keys: SubjectKeyStore,
  options: { open: boolean },
): Promise<ProjectionEvent[]> {
  return openGuestDataWith(events, options.open ? await guestKeysOf(events, keys) : null);
}

const sealedOf = (e: RecordedEvent) => (e.data as PassCreated['data']).guest;

/** The subject keys that open the events' guest data (one key-store query), for openGuestDataWith. */
export async function guestKeysOf(events: readonly RecordedEvent[], keys: SubjectKeyStore): Promise<Map<string, Buffer>> {
  const keyIds = new Set<string>();
  for (const event of events) if (event.type === 'PassCreated') keyIds.add(sealedOf(event).keyId);
  return keyIds.size > 0 ? keys.getMany([...keyIds]) : new Map();
}

/** openGuestData with the keys fetched beforehand; `found` null keeps no guest data. */
export function openGuestDataWith(events: readonly RecordedEvent[], found: ReadonlyMap<string, Buffer> | null): ProjectionEvent[] {
  if (!events.some((e) => e.type === 'PassCreated')) return events as unknown as ProjectionEvent[];
  // The passes of one request share one sealed box: open each box once (keyed by key, IV and tag).
  const openedBoxes = new Map<string, GuestDetails>();
  return events.map((event) => {
    if (event.type !== 'PassCreated') return event as unknown as ProjectionEvent;
    const sealed = sealedOf(event);
    const key = found?.get(sealed.keyId);
    let guest: GuestDetails | null = null;
    if (key) {
      const box = `${sealed.keyId}:${sealed.iv}:${sealed.tag}`;
      guest = openedBoxes.get(box) ?? null;
      if (!guest) {
        try {
          guest = storableGuest(open<GuestDetails>(key, sealed));
        } catch (error) {
          throw new GuestDataError(event.id, error);
        }
        openedBoxes.set(box, guest);
      }
    }
    return { ...event, data: { ...(event.data as PassCreated['data']), guest } } as unknown as ProjectionEvent;
  });
}

/** The guest with unstorable text mended: the opened object itself when nothing needs it, as nearly always. */
function storableGuest(guest: GuestDetails): GuestDetails {
  let mended: Record<string, unknown> | null = null;
  for (const [name, value] of Object.entries(guest)) {
    if (typeof value !== 'string' || isStorableText(value)) continue;
    mended ??= { ...guest };
    mended[name] = storableText(value);
  }
  return (mended ?? guest) as GuestDetails;
}
