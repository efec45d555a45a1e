// Appends valid events of the catalogue straight to a real event store, the way the use cases
// shape them (streams, sealed guest data under a key of the batch), for runner and rebuild tests.
import { createHash, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { createEventStore } from '../../shared/event-store/create-event-store.js';
import { eventSchemas, schemaVersionOf } from '../../shared/domain/event-schemas.js';
import { streams, type DomainEvent, type GuestDetails } from '../../shared/domain/events.js';
import type { EventStore, NewEvent, Position, RecordedEvent } from '../../shared/event-store/event-store.js';
import { comparePositions, START } from '../../shared/event-store/event-store.js';
import { PostgresSubjectKeyStore } from '../../shared/crypto/postgres-subject-key-store.js';
import { testDataKeyRing } from '../support/data-kek.js';
import { seal } from '../../shared/crypto/sealed-box.js';
import { migratedDatabase } from '../support/database.js';

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');
export const MONTH = '2025-03';

export interface TestDb {
  readonly url: string;
  readonly knex: Knex;
  readonly store: EventStore;
  readonly subjectKeys: PostgresSubjectKeyStore;
  readonly log: LogWriter;
  close(): Promise<void>;
}

export async function openTestDb(label: string): Promise<TestDb> {
  const { url, knex } = await migratedDatabase(label, { max: 10 });
  const store = createEventStore({ databaseUrl: url, eventStoreUrl: null, schemas: eventSchemas });
  const subjectKeys = new PostgresSubjectKeyStore(knex, testDataKeyRing());
  return {
    url,
    knex,
    store,
    subjectKeys,
    log: new LogWriter(store, subjectKeys),
    async close() {
      await store.close();
      await knex.destroy();
    },
  };
}

function newEvent(event: DomainEvent, occurredAt = new Date()): NewEvent {
  return {
    id: randomUUID(),
    type: event.type,
    data: event.data,
    metadata: { correlationId: randomUUID(), causationId: null, actor: { kind: 'operator' }, occurredAt: occurredAt.toISOString(), schemaVersion: schemaVersionOf(event.type) },
  };
}

export class LogWriter {
  private nextPassId = 1;
  last: Position = { commit: 0n, prepare: 0n };

  constructor(
    private readonly store: EventStore,
    private readonly subjectKeys: PostgresSubjectKeyStore,
  ) {}

  async append(stream: string, events: DomainEvent[]): Promise<Position> {
    const result = await this.store.appendToStream(stream, events.map((e) => newEvent(e)), 'any');
    if (comparePositions(result.position, this.last) > 0) this.last = result.position;
    return result.position;
  }

  /** An organization with one facility and one admin who may invite. */
  async organization(orgId: number, adminId = orgId * 100): Promise<void> {
    await this.append(streams.organization(orgId), [{ type: 'OrganizationCreated', data: { orgId, name: `Org ${orgId}`, inviteAllowance: 50 } }]);
    await this.append(streams.facility(orgId * 10), [
      { type: 'FacilityAdded', data: { facilityId: orgId * 10, orgId, name: `HQ ${orgId}`, description: null } },
    ]);
    await this.append(streams.user(adminId), [
      {
        type: 'UserAdded',
        data: { userId: adminId, orgId, email: `admin${adminId}@example.org`, firstName: 'Ad', lastName: 'Min', passwordHash: null, inviteAllowance: null },
      },
      { type: 'RoleGranted', data: { userId: adminId, orgId, role: 'admin' } },
      { type: 'RoleGranted', data: { userId: adminId, orgId, role: 'self_invite' } },
    ]);
  }

  async apiKey(orgId: number, keyId: string, userId = orgId * 100): Promise<void> {
    await this.append(streams.apiKey(keyId), [
      {
        type: 'ApiKeyCreated',
        data: { keyId, orgId, userId, keyHash: sha256(keyId), scopes: ['org:passes:read'], expiresAt: null, allowedIps: ['10.0.0.0/8'], name: null },
      },
    ]);
  }

  /** A batch of `count` passes for one guest, sealed under the batch's own subject key. */
  async passes(orgId: number, count: number, options: { createdBy?: number; guest?: Partial<GuestDetails> } = {}): Promise<{ passIds: number[]; batchId: string }> {
    const createdBy = options.createdBy ?? orgId * 100;
    const batchId = randomUUID();
    const key = await this.subjectKeys.create(batchId);
    const passIds = Array.from({ length: count }, () => this.nextPassId++);
    const qr = Object.fromEntries(passIds.map((id) => [publicIdOf(id), `qr-${id}-${batchId}`]));
    const guest: GuestDetails = {
      firstName: 'Grace',
      lastName: `Hopper${passIds[0]}`,
      email: `grace${passIds[0]}@example.org`,
      phone: null,
      country: null,
      vehicleNumber: null,
      notes: null,
      invitedBy: null,
      qrValues: qr,
      ...options.guest,
    };
    const sealed = seal(key, guest);
    await this.append(
      streams.guestInvites(createdBy, MONTH),
      passIds.map((passId) => ({
        type: 'PassCreated',
        data: {
          passId,
          publicId: publicIdOf(passId),
          orgId,
          facilityId: orgId * 10,
          createdBy,
          batchId,
          batchSize: count,
          arrivalDate: '2025-03-20',
          arrivalTime: null,
          validFrom: '2025-03-20T00:00:00.000Z',
          validUntil: '2025-03-20T23:59:59.999Z',
          qrHash: sha256(qr[publicIdOf(passId)]!),
          guest: sealed,
          passLinkHash: null,
        },
      })),
    );
    return { passIds, batchId };
  }

  async revoke(orgId: number, passId: number, createdBy = orgId * 100): Promise<void> {
    await this.append(streams.guestInvites(createdBy, MONTH), [
      { type: 'PassRevoked', data: { passId, publicId: publicIdOf(passId), orgId, facilityId: orgId * 10, qrHash: sha256('x') } },
    ]);
  }
}

export function publicIdOf(passId: number): string {
  return `gst_${passId.toString(16).padStart(32, '0')}`;
}

/**
 * The whole log once every event the writer appended can be read: readers see no event written
 * after the oldest transaction still running anywhere on the server (another test's, say) began.
 */
export async function visibleLog(db: Pick<TestDb, 'store' | 'log'>, timeoutMs = 10_000): Promise<RecordedEvent[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const events = await db.store.readAll();
    if (comparePositions(events.at(-1)?.position ?? START, db.log.last) >= 0) return events;
    if (Date.now() > deadline) throw new Error('the events appended did not become visible in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Resolves once every named projection's checkpoint has reached `position`. */
export async function waitForCheckpoints(knex: Knex, position: Position, timeoutMs = 20_000, names?: readonly string[]): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await knex.raw<{ rows: Array<{ name: string; c: string; p: string; error: string | null }> }>(
      'SELECT name, position_commit::text AS c, position_prepare::text AS p, error FROM projection_checkpoints',
    );
    const relevant = rows.filter((r) => !names || names.includes(r.name));
    if (
      relevant.length > 0 &&
      (!names || relevant.length === names.length) &&
      relevant.every((r) => comparePositions({ commit: BigInt(r.c), prepare: BigInt(r.p) }, position) >= 0)
    ) {
      return;
    }
    if (Date.now() > deadline) throw new Error(`checkpoints did not reach the position in time: ${JSON.stringify(relevant)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
