// How the runner hands member events to projections (projections/guest-data.ts): the name opened,
// the contact kept sealed with its keyed hashes, nulls once a key is destroyed.
import { randomBytes, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { seal } from '../../shared/crypto/sealed-box.js';
import { HmacContactHasher } from '../../shared/crypto/contact-search.js';
import type { SubjectKey, SubjectKeyStore } from '../../shared/crypto/subject-keys.js';
import type { RecordedEvent } from '../../shared/event-store/event-store.js';
import { GuestDataError, guestKeysOf, openGuestData, openGuestDataWith } from '../../projections/guest-data.js';

const key = (): SubjectKey => ({ keyId: randomUUID(), key: randomBytes(32) });
const hasher = new HmacContactHasher(Buffer.alloc(32, 3));

function recorded(type: string, data: unknown, n = 1): RecordedEvent {
  return {
    id: randomUUID(),
    type,
    data,
    streamName: 'member-x',
    revision: 0,
    position: { commit: BigInt(n), prepare: BigInt(n) },
    recordedAt: new Date(),
    metadata: { correlationId: randomUUID(), causationId: null, actor: { kind: 'operator' }, occurredAt: new Date().toISOString(), schemaVersion: 1 },
  };
}

function memberJoined(nameKey: SubjectKey, contactKey: SubjectKey | null, memberId = `emp_${'1'.repeat(32)}`) {
  return recorded('MemberJoined', {
    memberId,
    orgId: 1,
    userId: null,
    name: seal(nameKey, { firstName: 'Ada', lastName: 'Lovelace' }),
    contact: contactKey ? seal(contactKey, { email: 'ada@example.org', phone: '+44 20 7946 0012' }) : null,
    jobTitle: null,
    department: null,
    externalId: null,
  });
}

class CountingKeyStore implements SubjectKeyStore {
  queries = 0;
  constructor(private readonly keys: Map<string, Buffer>) {}
  async create(): Promise<SubjectKey> {
    throw new Error('not used');
  }
  async createForNewSubject(): Promise<SubjectKey & { subjectId: string }> {
    throw new Error('not used');
  }
  async createMany(): Promise<SubjectKey[]> {
    throw new Error('not used');
  }
  async getMany(ids: readonly string[]) {
    this.queries++;
    return new Map(ids.filter((id) => this.keys.has(id)).map((id) => [id, this.keys.get(id)!]));
  }
  async destroy(): Promise<void> {}
}

describe('opening member events for projections', () => {
  it('opens the name, keeps the contact sealed and adds its hashes, with one key query for the batch', async () => {
    const [name1, contact1, name2] = [key(), key(), key()];
    const events = [memberJoined(name1, contact1), memberJoined(name2, null, `emp_${'2'.repeat(32)}`)];
    const store = new CountingKeyStore(new Map([name1, contact1, name2].map((k) => [k.keyId, k.key])));
    const opened = await openGuestData(events, store, { open: true, contactHasher: hasher });
    expect(store.queries).to.equal(1);
    const first = opened[0]!.data as { name: unknown; contact: { sealed: unknown; emailHash: string; phoneHash: string } };
    expect(first.name).to.deep.equal({ firstName: 'Ada', lastName: 'Lovelace' });
    expect(first.contact.sealed).to.deep.equal((events[0]!.data as { contact: unknown }).contact);
    expect(first.contact.emailHash).to.equal(hasher.hash('email', 'ADA@example.org'));
    expect(first.contact.phoneHash).to.equal(hasher.hash('phone', '+442079460012'));
    expect((opened[1]!.data as { contact: unknown }).contact).to.equal(null);
  });

  it('gives null name and contact once their keys are destroyed, and null hashes without a hasher', async () => {
    const [name, contact] = [key(), key()];
    const event = memberJoined(name, contact);
    expect(openGuestDataWith([event], new Map())[0]!.data).to.include({ name: null, contact: null });
    const noHasher = openGuestDataWith([event], new Map([[name.keyId, name.key], [contact.keyId, contact.key]]))[0]!.data as { contact: unknown };
    expect(noHasher.contact).to.deep.include({ emailHash: null, phoneHash: null });
    expect(openGuestDataWith([event], null)[0]!.data).to.include({ name: null, contact: null });
  });

  it('asks for every key of the batch: guest, name and contact', async () => {
    const [name, contact] = [key(), key()];
    const store = new CountingKeyStore(new Map());
    const asked: string[] = [];
    store.getMany = async (ids) => (asked.push(...ids), new Map());
    await guestKeysOf([memberJoined(name, contact), recorded('MemberErased', { memberId: 'x', orgId: 1, includeName: true })], store);
    expect(asked).to.have.members([name.keyId, contact.keyId]);
  });

  it('a box that does not open under its own key is a defect, not an erasure', () => {
    const [name, other] = [key(), key()];
    const event = memberJoined(name, null);
    expect(() => openGuestDataWith([event], new Map([[name.keyId, other.key]]))).to.throw(GuestDataError);
  });
});
