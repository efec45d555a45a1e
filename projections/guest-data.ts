// Opens PassCreated's sealed guest data for the projections that read it. A destroyed (or
// unknown) key gives `guest: null`: the guest was erased, and the read model keeps no names.
// Sealed text never passed the log's own checks (jsonb holds no NUL), and events written before
// requests were checked for it may hold text PostgreSQL cannot store: it is made storable here,
// or such a pass would stop its read models for good.
import type { GuestDetails, PassCreated } from '../shared/domain/events.js';
import type { RecordedEvent } from '../shared/event-store/event-store.js';
import type { SubjectKeyStore } from '../shared/crypto/subject-keys.js';
import { open } from '../shared/crypto/sealed-box.js';
import { storableText } from '../shared/db/storable-text.js';
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
  const sealedOf = (e: RecordedEvent) => (e.data as PassCreated['data']).guest;
  const passCreated = events.filter((e) => e.type === 'PassCreated');
  if (passCreated.length === 0) return events as unknown as ProjectionEvent[];
  const keyIds = options.open ? [...new Set(passCreated.map((e) => sealedOf(e).keyId))] : [];
  const found = keyIds.length > 0 ? await keys.getMany(keyIds) : new Map<string, Buffer>();
  // The passes of one request share one sealed box: open each box once (keyed by key, IV and tag).
  const openedBoxes = new Map<string, GuestDetails>();
  return events.map((event) => {
    if (event.type !== 'PassCreated') return event as unknown as ProjectionEvent;
    const sealed = sealedOf(event);
    const key = options.open ? found.get(sealed.keyId) : undefined;
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

function storableGuest(guest: GuestDetails): GuestDetails {
  const fields = Object.entries(guest).map(([name, value]) => [name, typeof value === 'string' ? storableText(value) : value]);
  return Object.fromEntries(fields) as GuestDetails;
}
