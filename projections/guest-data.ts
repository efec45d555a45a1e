// Opens sealed personal data for the projections that read it: PassCreated's guest data, and a
// member's name (MemberJoined, MemberProfileChanged) with the keyed search hashes of its still
// sealed contact. A destroyed (or unknown) key gives `guest: null`, `name: null`,
// `contact: null`: the person was erased, and the read model keeps nothing of it.
// Sealed text never passed the log's own checks (jsonb holds no NUL), and events written before
// requests were checked for it may hold text PostgreSQL cannot store: it is made storable here,
// or such a pass would stop its read models for good.
import type { GuestDetails, MemberJoined, MemberProfileChanged, PassCreated } from '../shared/domain/events.js';
import type { MemberContact, MemberName } from '../shared/domain/member-events.js';
import type { ContactHasher } from '../shared/crypto/contact-search.js';
import type { RecordedEvent } from '../shared/event-store/event-store.js';
import type { SubjectKeyStore } from '../shared/crypto/subject-keys.js';
import { open } from '../shared/crypto/sealed-box.js';
import { isStorableText, storableText } from '../shared/db/storable-text.js';
import { SEALED_EVENT_TYPES, type OpenedMemberContact, type ProjectionEvent } from './projection.js';

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

/** How sealed data is opened: a ContactHasher computes the members' contact search hashes (null without one). */
export interface OpenOptions {
  readonly open: boolean;
  readonly contactHasher?: ContactHasher;
}

/**
 * Events as projections see them. With `open` false, sealed data is not opened (PassCreated's
 * `guest`, a member's `name` and `contact` are null), for batches no data-reading projection
 * needs. One key-store query per call, for every key of the batch.
 */
export async function openGuestData(events: readonly RecordedEvent[], keys: SubjectKeyStore, options: OpenOptions): Promise<ProjectionEvent[]> {
  return openGuestDataWith(events, options.open ? await guestKeysOf(events, keys) : null, options.contactHasher);
}

const sealedOf = (e: RecordedEvent) => (e.data as PassCreated['data']).guest;
const memberProfileOf = (e: RecordedEvent) => e.data as MemberJoined['data'] | MemberProfileChanged['data'];
const isMemberProfile = (e: RecordedEvent) => e.type === 'MemberJoined' || e.type === 'MemberProfileChanged';

/** The subject keys that open the events' sealed data (one key-store query), for openGuestDataWith. */
export async function guestKeysOf(events: readonly RecordedEvent[], keys: SubjectKeyStore): Promise<Map<string, Buffer>> {
  const keyIds = new Set<string>();
  for (const event of events) {
    if (event.type === 'PassCreated') keyIds.add(sealedOf(event).keyId);
    else if (isMemberProfile(event)) {
      const data = memberProfileOf(event);
      keyIds.add(data.name.keyId);
      if (data.contact) keyIds.add(data.contact.keyId);
    }
  }
  return keyIds.size > 0 ? keys.getMany([...keyIds]) : new Map();
}

/**
 * openGuestData with the keys fetched beforehand; `found` null opens nothing. A member's contact
 * stays sealed: only its keyed hashes are computed (the key must be present, so an erased
 * contact leaves no hash behind even if a stale event is replayed).
 */
export function openGuestDataWith(
  events: readonly RecordedEvent[],
  found: ReadonlyMap<string, Buffer> | null,
  contactHasher?: ContactHasher,
): ProjectionEvent[] {
  if (!events.some((e) => SEALED_EVENT_TYPES.has(e.type))) return events as unknown as ProjectionEvent[];
  // The passes of one request share one sealed box: open each box once (keyed by key, IV and tag).
  const openedBoxes = new Map<string, GuestDetails>();
  return events.map((event) => {
    if (isMemberProfile(event)) return openMemberProfile(event, found, contactHasher);
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

function openMemberProfile(event: RecordedEvent, found: ReadonlyMap<string, Buffer> | null, hasher: ContactHasher | undefined): ProjectionEvent {
  const data = memberProfileOf(event);
  let name: MemberName | null = null;
  let contact: OpenedMemberContact | null = null;
  try {
    const nameKey = found?.get(data.name.keyId);
    if (nameKey) {
      const opened = open<MemberName>(nameKey, data.name);
      name = { firstName: storableText(opened.firstName), lastName: storableText(opened.lastName) };
    }
    const contactKey = data.contact ? found?.get(data.contact.keyId) : undefined;
    if (data.contact && contactKey) {
      let emailHash: string | null = null;
      let phoneHash: string | null = null;
      if (hasher) {
        const { email, phone } = open<MemberContact>(contactKey, data.contact);
        emailHash = email ? hasher.hash('email', email) : null;
        phoneHash = phone ? hasher.hash('phone', phone) : null;
      }
      contact = { sealed: data.contact, emailHash, phoneHash };
    }
  } catch (error) {
    throw new GuestDataError(event.id, error);
  }
  return { ...event, data: { ...data, name, contact } } as unknown as ProjectionEvent;
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
