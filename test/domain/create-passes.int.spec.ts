// createPasses against a real event store and PostgreSQL (ids, subject keys), two command
// handlers standing in for two processes. PostgreSQL always; EventStoreDB too when EVENTSTORE_URL
// names one. The watermark is a no-op stub: read models are not under test here.
import { expect } from 'chai';
import { createHash, randomUUID } from 'node:crypto';
import { type Knex } from '../../shared/db/knex.js';
import { CommandHandler, type CommandContext } from '../../shared/event-store/command-handler.js';
import type { EventStore } from '../../shared/event-store/event-store.js';
import { createPostgresEventStore } from '../../shared/event-store/postgres-event-store.js';
import { createEventStoreDbEventStore } from '../../shared/event-store/eventstoredb-event-store.js';
import { ValidatingEventStore } from '../../shared/event-store/validating-event-store.js';
import { eventSchemas } from '../../shared/domain/event-schemas.js';
import { monthOf, streams, type GuestDetails, type PassCreated } from '../../shared/domain/events.js';
import { parseCreatePassInput } from '../../shared/domain/pass-request.js';
import { PostgresIdAllocator } from '../../shared/domain/postgres-id-allocator.js';
import { PostgresSubjectKeyStore } from '../../shared/crypto/postgres-subject-key-store.js';
import { testDataKeyRing } from '../support/data-kek.js';
import { open } from '../../shared/crypto/sealed-box.js';
import { ConflictError, NotFoundError, QuotaExceededError } from '../../shared/errors.js';
import type { ReadModelWatermark } from '../../shared/read-model-watermark.js';
import type { CommandDeps } from '../../command-service/command-deps.js';
import { createPasses } from '../../command-service/passes/create-passes.js';
import { createOrganization } from '../../command-service/organizations/create-organization.js';
import { addFacility } from '../../command-service/facilities/add-facility.js';
import { suspendFacility, resumeFacility, deactivateFacility } from '../../command-service/facilities/change-facility-status.js';
import { addUser } from '../../command-service/users/add-user.js';
import { eventStoreDbNode, requireComponent, waitForEventStoreDb } from '../support/components.js';
import { migratedDatabase } from '../support/database.js';

const noWatermark: ReadModelWatermark = { waitFor: async () => true, close: async () => undefined };
const NOW = new Date('2026-03-10T08:00:00.000Z');
const ctx = (now = NOW): CommandContext => ({ correlationId: randomUUID(), actor: { kind: 'operator' }, now });
const request = (facilityId: number, body: Record<string, unknown> = {}, now = NOW) =>
  parseCreatePassInput({ first_name: 'Ada', email: 'ada@example.com', arrival_date: '2026-03-12', facility_id: facilityId, ...body }, now);
const sha256 = (value: string) => createHash('sha256').update(value, 'utf8').digest('hex');

interface Adapter {
  readonly name: string;
  readonly create: (databaseUrl: string) => EventStore;
  readonly available: () => Promise<{ ok: boolean; how: string }>;
}

const esdbUrl = process.env.EVENTSTORE_URL?.trim();
const adapters: Adapter[] = [
  { name: 'PostgreSQL', create: (url) => createPostgresEventStore(url, { maxConnections: 5 }), available: async () => ({ ok: true, how: '' }) },
  {
    name: 'EventStoreDB',
    create: () => createEventStoreDbEventStore(esdbUrl!),
    available: async () => {
      if (!esdbUrl) return { ok: false, how: 'EVENTSTORE_URL is not set' };
      const { host, port } = eventStoreDbNode(esdbUrl);
      return { ok: await waitForEventStoreDb(esdbUrl, 30_000), how: `GET /health/live of EVENTSTORE_URL at ${host}:${port}` };
    },
  },
];

for (const adapter of adapters) {
  describe(`createPasses over the ${adapter.name} event store`, function () {
    this.timeout(120_000);
    let knex: Knex;
    const stores: EventStore[] = [];
    let one: CommandDeps;
    let two: CommandDeps;

    before(async function () {
      const { ok, how } = await adapter.available();
      if (!ok && adapter.name === 'EventStoreDB' && !esdbUrl) {
        console.warn(`  skipping: ${how}, so the allowance did not run against EventStoreDB`);
        this.skip();
      }
      requireComponent(this, adapter.name, ok, how);
      const migrated = await migratedDatabase('create_passes');
      const url = migrated.url;
      knex = migrated.knex;
      // A persistent EventStoreDB keeps streams between runs; ids from a random offset keep this
      // run's stream names (organization-N, guest-invites-N-...) its own.
      const offset = 1 + Math.floor(Math.random() * 1e12);
      for (const sequence of ['organization_id_seq', 'facility_id_seq', 'user_id_seq', 'pass_id_seq']) {
        await knex.raw('select setval(?::regclass, ?)', [sequence, offset]);
      }
      /** A process: its own store connection and its own handler (own cache, own in-process queue). */
      const process = (): CommandDeps => {
        const store = new ValidatingEventStore(adapter.create(url), eventSchemas);
        stores.push(store);
        return {
          store,
          handler: new CommandHandler(store),
          ids: new PostgresIdAllocator(knex),
          subjectKeys: new PostgresSubjectKeyStore(knex, testDataKeyRing()),
          db: knex,
          watermark: noWatermark,
          projectionWaitMs: 0,
        };
      };
      [one, two] = [process(), process()];
    });

    after(async () => {
      await Promise.all(stores.splice(0).map((s) => s.close()));
      await knex?.destroy();
    });

    async function tenant(options: { orgAllowance?: number; userAllowance?: number | null } = {}) {
      const { orgId } = await createOrganization(one, { name: 'Acme', inviteAllowance: options.orgAllowance ?? 50 }, ctx());
      const { facilityId } = await addFacility(one, { orgId, name: 'HQ' }, ctx());
      const { userId } = await addUser(
        one,
        { orgId, email: `admin-${randomUUID()}@example.com`, firstName: 'Grace', lastName: 'Hopper', roles: ['admin'], inviteAllowance: options.userAllowance ?? null },
        ctx(),
      );
      return { orgId, facilityId, userId };
    }

    async function passEvents(userId: number, now = NOW): Promise<PassCreated['data'][]> {
      const events = await one.store.readStream(streams.guestInvites(userId, monthOf(now)));
      return events.filter((e) => e.type === 'PassCreated').map((e) => e.data as PassCreated['data']);
    }

    it('20 simultaneous single-pass creates against an allowance of 10: exactly 10 succeed, 10 get 402', async () => {
      const { orgId, facilityId, userId } = await tenant({ orgAllowance: 10 });
      const results = await Promise.allSettled(
        Array.from({ length: 20 }, (_, i) => createPasses(i % 2 ? two : one, { orgId, userId, request: request(facilityId) }, ctx())),
      );
      const succeeded = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      const failed = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
      expect(succeeded).to.have.length(10);
      expect(failed).to.have.length(10);
      for (const reason of failed) {
        expect(reason).to.be.instanceOf(QuotaExceededError);
        expect(reason).to.include({ limit: 10, current: 10, requested: 1 });
      }

      const stored = await passEvents(userId);
      expect(stored).to.have.length(10);
      expect(new Set(stored.map((p) => p.publicId)).size).to.equal(10);
      expect(new Set(stored.map((p) => p.passId)).size).to.equal(10);
      const issued = succeeded.flatMap((s) => s.passes);
      expect(issued.map((p) => p.publicId).sort()).to.deep.equal(stored.map((p) => p.publicId).sort());
      // Rejected batches leave no key behind: one key per stored batch.
      const batches = new Set(stored.map((p) => p.batchId));
      const { rows } = await knex.raw<{ rows: Array<{ n: number }> }>('select count(*)::int as n from subject_keys where subject_id = any(?::text[])', [[...batches]]);
      expect(rows[0]!.n).to.equal(10);
    });

    it('makes a batch once per request id: the same request again, on either process and at once, answers the first batch', async () => {
      // The batch fills the month: a repeat is answered all the same, another request is not.
      const { orgId, facilityId, userId } = await tenant({ orgAllowance: 50, userAllowance: 2 });
      const same = ctx();
      const body = request(facilityId, { quantity: 2 });
      const answers = await Promise.all([one, two, one, two, one].map((deps) => createPasses(deps, { orgId, userId, request: body }, same)));
      expect(await passEvents(userId), 'passes in the stream').to.have.length(2);
      const made = answers.filter((a) => !a.repeated);
      expect(made, 'answers that made the batch').to.have.length(1);
      for (const answer of answers) {
        expect(answer.batchId).to.equal(made[0]!.batchId);
        expect(answer.passLinkToken).to.equal(made[0]!.passLinkToken);
        expect(answer.passes).to.deep.equal(made[0]!.passes);
      }
      // Later too (a retry after a time-out), once the facility was suspended.
      await suspendFacility(one, { orgId, facilityId }, ctx());
      const later = await createPasses(two, { orgId, userId, request: body }, same);
      expect(later).to.deep.include({ repeated: true, batchId: made[0]!.batchId });
      await resumeFacility(one, { orgId, facilityId }, ctx());
      // Another request with the same body is another batch: refused, the month is full.
      let error: unknown;
      await createPasses(one, { orgId, userId, request: body }, ctx()).catch((e: unknown) => (error = e));
      expect(error).to.be.instanceOf(QuotaExceededError);
      expect(await passEvents(userId)).to.have.length(2);
    });

    it('refuses the same request id with another guest or facility (409), and creates nothing', async () => {
      const { orgId, facilityId, userId } = await tenant();
      const { facilityId: otherFacility } = await addFacility(one, { orgId, name: 'Annex' }, ctx());
      const same = ctx();
      await createPasses(one, { orgId, userId, request: request(facilityId) }, same);
      for (const body of [request(facilityId, { first_name: 'Grace' }), request(otherFacility)]) {
        let error: unknown;
        await createPasses(two, { orgId, userId, request: body }, same).catch((e: unknown) => (error = e));
        expect(error).to.be.instanceOf(ConflictError);
        expect((error as Error).message).to.match(/request id was already used/);
      }
      expect(await passEvents(userId)).to.have.length(1);
    });

    it('counts a batch all or nothing', async () => {
      const { orgId, facilityId, userId } = await tenant({ orgAllowance: 50, userAllowance: 5 });
      const first = await createPasses(one, { orgId, userId, request: request(facilityId, { quantity: 3 }) }, ctx());
      expect(first.passes).to.have.length(3);

      let error: unknown;
      await createPasses(two, { orgId, userId, request: request(facilityId, { quantity: 3 }) }, ctx()).catch((e: unknown) => (error = e));
      expect(error).to.be.instanceOf(QuotaExceededError);
      expect(error).to.include({ limit: 5, current: 3, requested: 3 });
      expect(await passEvents(userId)).to.have.length(3);

      const last = await createPasses(two, { orgId, userId, request: request(facilityId, { quantity: 2 }) }, ctx());
      expect(last.passes).to.have.length(2);
      expect(await passEvents(userId)).to.have.length(5);
    });

    it('uses the organization default when the user has no allowance of their own', async () => {
      const { orgId, facilityId, userId } = await tenant({ orgAllowance: 2 });
      await createPasses(one, { orgId, userId, request: request(facilityId, { quantity: 2 }) }, ctx());
      let error: unknown;
      await createPasses(one, { orgId, userId, request: request(facilityId) }, ctx()).catch((e: unknown) => (error = e));
      expect(error).to.be.instanceOf(QuotaExceededError).and.to.include({ limit: 2 });
    });

    it('starts every UTC month afresh', async () => {
      const { orgId, facilityId, userId } = await tenant({ orgAllowance: 1 });
      const march = new Date('2026-03-31T23:59:00.000Z');
      const april = new Date('2026-04-01T00:00:00.000Z');
      await createPasses(one, { orgId, userId, request: request(facilityId, { arrival_date: '2026-04-02' }, march) }, ctx(march));
      await createPasses(one, { orgId, userId, request: request(facilityId, { arrival_date: '2026-04-02' }, april) }, ctx(april));
      expect(await passEvents(userId, march)).to.have.length(1);
      expect(await passEvents(userId, april)).to.have.length(1);
    });

    it('records passes with distinct QR values known only by hash, and guest details only sealed', async () => {
      const { orgId, facilityId, userId } = await tenant();
      const body = { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com', phone: '+44 20 7946 0958', quantity: 3, arrival_time: '09:30' };
      const result = await createPasses(one, { orgId, userId, request: request(facilityId, body) }, ctx());
      expect(result.passes).to.have.length(3);
      const qrValues = result.passes.map((p) => p.qrValue);
      expect(new Set(qrValues).size).to.equal(3);
      for (const p of result.passes) {
        expect(p.publicId).to.match(/^gst_[0-9a-f]{32}$/);
        expect(Buffer.from(p.qrValue, 'base64url')).to.have.length(32);
      }

      const events = await one.store.readStream(streams.guestInvites(userId, monthOf(NOW)));
      const stored = events.map((e) => e.data as PassCreated['data']);
      const text = JSON.stringify(events.map((e) => ({ data: e.data, metadata: e.metadata })));
      for (const secret of [...qrValues, 'ada@example.com', 'Lovelace', '2079460958']) expect(text).not.to.include(secret);
      expect(stored.map((p) => p.qrHash)).to.deep.equal(qrValues.map(sha256));
      expect(stored.map((p) => p.passId)).to.deep.equal(result.passes.map((p) => p.passId));
      expect(stored[0]).to.deep.include({
        orgId,
        facilityId,
        createdBy: userId,
        batchId: result.batchId,
        batchSize: 3,
        arrivalDate: '2026-03-12',
        arrivalTime: '09:30',
        validFrom: '2026-03-12T09:30:00.000Z',
        validUntil: '2026-03-12T23:59:59.999Z',
      });
      expect(events.every((e) => e.metadata.actor.kind === 'operator')).to.equal(true);

      const keys = await one.subjectKeys.getMany([stored[0]!.guest.keyId]);
      const guest = open<GuestDetails>(keys.get(stored[0]!.guest.keyId)!, stored[0]!.guest);
      expect(guest).to.deep.include({ firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', phone: '+442079460958' });
      expect(guest.qrValues).to.deep.equal(Object.fromEntries(result.passes.map((p) => [p.publicId, p.qrValue])));

      // Erasure: once the batch's key is destroyed, the sealed details can never be opened.
      await one.subjectKeys.destroy(result.batchId);
      expect((await one.subjectKeys.getMany([stored[0]!.guest.keyId])).size).to.equal(0);
    });

    it('is 404 for an unknown facility or one of another organization', async () => {
      const { orgId, userId } = await tenant();
      const other = await tenant();
      for (const facilityId of [other.facilityId, 999_999_999_999_999]) {
        let error: unknown;
        await createPasses(one, { orgId, userId, request: request(facilityId) }, ctx()).catch((e: unknown) => (error = e));
        expect(error).to.be.instanceOf(NotFoundError);
      }
      expect(await passEvents(userId)).to.have.length(0);
    });

    it('is 409 while the facility is suspended and after it is deactivated, and works again on resume', async () => {
      const { orgId, facilityId, userId } = await tenant();
      const attempt = () => createPasses(two, { orgId, userId, request: request(facilityId) }, ctx());
      const rejection = async () => attempt().then(() => null, (e: unknown) => e);

      await suspendFacility(one, { facilityId }, ctx());
      expect(await rejection()).to.be.instanceOf(ConflictError).with.property('message').that.matches(/suspended/);
      await resumeFacility(one, { facilityId }, ctx());
      expect((await attempt()).passes).to.have.length(1);
      await deactivateFacility(one, { facilityId }, ctx());
      expect(await rejection()).to.be.instanceOf(ConflictError).with.property('message').that.matches(/deactivated/);
      expect(await passEvents(userId)).to.have.length(1);
    });
  });
}
