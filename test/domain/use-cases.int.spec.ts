// The administrative use cases (organizations, facilities, users, API keys) against the
// PostgreSQL event store: what they return, what they record, and what they refuse.
import { expect } from 'chai';
import { createHash, randomUUID } from 'node:crypto';
import { type Knex } from '../../shared/db/knex.js';
import { CommandHandler, type CommandContext } from '../../shared/event-store/command-handler.js';
import type { EventStore, Position } from '../../shared/event-store/event-store.js';
import { createPostgresEventStore } from '../../shared/event-store/postgres-event-store.js';
import { ValidatingEventStore } from '../../shared/event-store/validating-event-store.js';
import { eventSchemas } from '../../shared/domain/event-schemas.js';
import { streams, type ApiKeyCreated, type UserAdded } from '../../shared/domain/events.js';
import { PostgresIdAllocator } from '../../shared/domain/postgres-id-allocator.js';
import { PostgresSubjectKeyStore } from '../../shared/crypto/postgres-subject-key-store.js';
import { testDataKeyRing } from '../support/data-kek.js';
import { verifyPassword } from '../../shared/crypto/password-hash.js';
import { ConflictError, NotFoundError, ValidationError } from '../../shared/errors.js';
import type { CommandDeps } from '../../command-service/command-deps.js';
import { createOrganization } from '../../command-service/organizations/create-organization.js';
import { addFacility } from '../../command-service/facilities/add-facility.js';
import { suspendFacility, deactivateFacility, resumeFacility } from '../../command-service/facilities/change-facility-status.js';
import { addUser } from '../../command-service/users/add-user.js';
import { createApiKey } from '../../command-service/api-keys/create-api-key.js';
import { revokeApiKey } from '../../command-service/api-keys/revoke-api-key.js';
import { migratedDatabase } from '../support/database.js';
import { ensureReadModels } from '../../projections/generation-tables.js';
import { usersProjection } from '../../projections/users-projection.js';
import { ABANDONED_AFTER_MS, memberEmailDecider } from '../../shared/domain/member-email-decider.js';
import { userDecider } from '../../shared/domain/user-decider.js';

const NOW = new Date('2026-03-10T08:00:00.000Z');
const ctx = (): CommandContext => ({ correlationId: randomUUID(), actor: { kind: 'operator' }, now: NOW });

async function rejection(work: Promise<unknown>): Promise<unknown> {
  return work.then(() => null, (e: unknown) => e);
}

describe('administrative use cases', function () {
  this.timeout(60_000);
  let knex: Knex;
  let store: EventStore;
  let deps: CommandDeps;
  const waited: Array<{ position: Position; projections: readonly string[] | undefined }> = [];

  before(async () => {
    const migrated = await migratedDatabase('use_cases');
    const url = migrated.url;
    knex = migrated.knex;
    store = new ValidatingEventStore(createPostgresEventStore(url, { maxConnections: 4 }), eventSchemas);
    deps = {
      store,
      handler: new CommandHandler(store),
      ids: new PostgresIdAllocator(knex),
      subjectKeys: new PostgresSubjectKeyStore(knex, testDataKeyRing()),
      db: knex,
      watermark: { waitFor: async (position, _ms, projections) => (waited.push({ position, projections }), true), close: async () => undefined },
      projectionWaitMs: 0,
    };
    await ensureReadModels(knex, [usersProjection]);
  });

  after(async () => {
    await store?.close();
    await knex?.destroy();
  });

  async function organization(): Promise<number> {
    return (await createOrganization(deps, { name: `Org ${randomUUID().slice(0, 8)}` }, ctx())).orgId;
  }

  it('waits for the read models after a write, at the write\'s position', async () => {
    waited.length = 0;
    const { orgId, position } = await createOrganization(deps, { name: 'Acme', inviteAllowance: 7 }, ctx());
    expect(waited).to.deep.equal([{ position, projections: ['organizations'] }]);
    const events = await store.readStream(streams.organization(orgId));
    expect(events.map((e) => e.data)).to.deep.equal([{ orgId, name: 'Acme', inviteAllowance: 7 }]);
  });

  it('waits only for the read models its events feed (one stopped elsewhere delays nothing)', async () => {
    const orgId = await organization();
    waited.length = 0;
    await addFacility(deps, { orgId, name: 'HQ' }, ctx());
    const { userId } = await addUser(deps, { orgId, email: `w${randomUUID().slice(0, 8)}@example.com`, firstName: 'W', lastName: 'Aiter', roles: ['admin'] }, ctx());
    const { keyId } = await createApiKey(deps, { orgId, userId, scopes: ['org:passes:read'] }, ctx());
    await revokeApiKey(deps, { keyId, orgId }, ctx());
    // A user is also a member: its write waits for the directory too.
    expect(waited.map((w) => w.projections)).to.deep.equal([['facilities'], ['users'], ['member_directory'], ['api_keys'], ['api_keys']]);
  });

  it('adds facilities only to existing organizations', async () => {
    const orgId = await organization();
    const { facilityId } = await addFacility(deps, { orgId, name: 'HQ', description: 'Front door' }, ctx());
    expect(facilityId).to.be.a('number');
    expect(await rejection(addFacility(deps, { orgId: 987654, name: 'HQ' }, ctx()))).to.be.instanceOf(NotFoundError);
  });

  it('reports whether a facility command changed anything, and refuses what deactivation forbids', async () => {
    const orgId = await organization();
    const { facilityId } = await addFacility(deps, { orgId, name: 'HQ' }, ctx());
    expect((await suspendFacility(deps, { facilityId }, ctx())).changed).to.equal(true);
    expect((await suspendFacility(deps, { facilityId }, ctx())).changed).to.equal(false);
    expect((await deactivateFacility(deps, { facilityId, orgId }, ctx())).changed).to.equal(true);
    expect(await rejection(resumeFacility(deps, { facilityId }, ctx()))).to.be.instanceOf(ConflictError);
    expect(await rejection(suspendFacility(deps, { facilityId: 424242 }, ctx()))).to.be.instanceOf(NotFoundError);
    expect(await rejection(suspendFacility(deps, { facilityId, orgId: orgId + 1 }, ctx()))).to.be.instanceOf(NotFoundError);
  });

  it('adds a user with roles, storing only a scrypt hash of the password', async () => {
    const orgId = await organization();
    const password = 'correct horse battery staple';
    const { userId } = await addUser(
      deps,
      { orgId, email: 'Grace@Example.com', firstName: 'Grace', lastName: 'Hopper', password, roles: ['self_invite', 'admin'] },
      ctx(),
    );
    const events = await store.readStream(streams.user(userId));
    expect(events.map((e) => e.type)).to.deep.equal(['UserAdded', 'RoleGranted', 'RoleGranted']);
    const added = events[0]!.data as UserAdded['data'];
    expect(added.email).to.equal('grace@example.com');
    expect(JSON.stringify(events.map((e) => e.data))).not.to.include(password);
    expect(await verifyPassword(password, added.passwordHash!)).to.equal(true);
  });

  it('refuses a short password, an unknown role and an unknown organization', async () => {
    const orgId = await organization();
    const base = { orgId, email: 'a@example.com', firstName: 'A', lastName: 'B' };
    expect(await rejection(addUser(deps, { ...base, password: 'short' }, ctx()))).to.be.instanceOf(ValidationError);
    expect(await rejection(addUser(deps, { ...base, roles: ['owner'] }, ctx()))).to.be.instanceOf(ValidationError);
    expect(await rejection(addUser(deps, { ...base, orgId: 99999 }, ctx()))).to.be.instanceOf(NotFoundError);
  });

  describe('one email per organization', () => {
    const user = (orgId: number, email: string) => ({ orgId, email, firstName: 'Ada', lastName: 'Lovelace' });
    const claimStream = (orgId: number, email: string) => streams.memberEmail(orgId, email);

    it('refuses a second user with the address in any case, writing nothing; another organization may have it', async () => {
      const orgId = await organization();
      const { userId } = await addUser(deps, user(orgId, 'ada@example.com'), ctx());
      const head = await store.headPosition();
      const refused = await rejection(addUser(deps, user(orgId, ' ADA@Example.com'), ctx()));
      expect(refused).to.be.instanceOf(ConflictError).with.property('message').match(/already has a user with this email/);
      expect(await store.headPosition()).to.deep.equal(head);
      expect((await store.readStream(claimStream(orgId, 'ada@example.com'))).map((e) => e.data)).to.deep.equal([
        { orgId, userId, claimedAt: NOW.toISOString() },
      ]);
      await addUser(deps, user(await organization(), 'ada@example.com'), ctx());
    });

    it('gives one user the address when twenty are added at once through two handlers', async () => {
      const orgId = await organization();
      const other: CommandDeps = { ...deps, handler: new CommandHandler(store) };
      const outcomes = await Promise.allSettled(
        Array.from({ length: 20 }, (_, i) => addUser(i % 2 === 0 ? deps : other, user(orgId, 'race@example.com'), ctx())),
      );
      const added = outcomes.filter((o) => o.status === 'fulfilled');
      const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
      expect(added).to.have.length(1);
      expect(refused.map((o) => o.reason)).to.satisfy((reasons: unknown[]) => reasons.every((r) => r instanceof ConflictError));
      const { rows } = await knex.raw(
        "SELECT count(*)::int AS n FROM events WHERE type = 'UserAdded' AND data->>'orgId' = ? AND data->>'email' = 'race@example.com'",
        [String(orgId)],
      );
      expect(rows[0].n).to.equal(1);
    });

    it('gives the address back when adding the user fails after the claim', async () => {
      const orgId = await organization();
      const { userId: taken } = await addUser(deps, user(orgId, 'first@example.com'), ctx());
      // An allocator handing out an id already in use makes the user's own append fail.
      const failing: CommandDeps = { ...deps, ids: { next: async () => [taken] } as unknown as CommandDeps['ids'] };
      const failed = await rejection(addUser(failing, user(orgId, 'second@example.com'), ctx()));
      expect(failed).to.be.instanceOf(ConflictError).with.property('message').match(/user .* already exists/);
      const claim = await store.readStream(claimStream(orgId, 'second@example.com'));
      expect(claim.map((e) => e.type)).to.deep.equal(['MemberEmailClaimed', 'MemberEmailReleased']);
      await addUser(deps, user(orgId, 'second@example.com'), ctx());
    });

    it('takes over a claim whose user never appeared once it is abandoned, not before', async () => {
      const orgId = await organization();
      const claimedAt = (ms: number) => new Date(NOW.getTime() - ms).toISOString();
      // Claims left by a process that ended before adding its user 999999001 (there is none).
      const strand = (email: string, ageMs: number) =>
        deps.handler.handle(
          claimStream(orgId, email),
          memberEmailDecider,
          { type: 'ClaimMemberEmail', data: { orgId, userId: 999_999_001, at: claimedAt(ageMs), abandonedHolder: null } },
          ctx(),
        );
      await strand('fresh@example.com', 60_000);
      await strand('stale@example.com', ABANDONED_AFTER_MS);
      const fresh = await rejection(addUser(deps, user(orgId, 'fresh@example.com'), ctx()));
      expect(fresh).to.be.instanceOf(ConflictError).with.property('message').match(/being added/);
      const { userId } = await addUser(deps, user(orgId, 'stale@example.com'), ctx());
      const claim = await store.readStream(claimStream(orgId, 'stale@example.com'));
      expect(claim.at(-1)!.data).to.deep.equal({ orgId, userId, claimedAt: NOW.toISOString() });

      // The abandoned creation is closed for good: its user can no longer be added late.
      expect((await store.readStream(streams.user(999_999_001))).map((e) => e.type)).to.deep.equal(['UserCreationAbandoned']);
      const late = await rejection(
        deps.handler.handle(
          streams.user(999_999_001),
          userDecider,
          { type: 'AddUser', data: { userId: 999_999_001, orgId, email: 'stale@example.com', firstName: 'L', lastName: 'Ate', passwordHash: null } },
          ctx(),
        ),
      );
      expect(late).to.be.instanceOf(ConflictError).with.property('message').match(/given up/);
    });

    it('refuses an old claim whose user exists', async () => {
      const orgId = await organization();
      const longAgo = { ...ctx(), now: new Date(NOW.getTime() - 2 * ABANDONED_AFTER_MS) };
      await addUser(deps, user(orgId, 'old@example.com'), longAgo);
      const refused = await rejection(addUser(deps, user(orgId, 'old@example.com'), ctx()));
      expect(refused).to.be.instanceOf(ConflictError).with.property('message').match(/already has a user with this email/);
    });

    it('keeps the claim when the user was written although its append reported a failure', async () => {
      const orgId = await organization();
      // A store whose user appends commit and then fail (a connection lost after COMMIT).
      const flaky: EventStore = Object.create(store, {
        appendToStream: {
          value: async (...args: Parameters<EventStore['appendToStream']>) => {
            const result = await store.appendToStream(...args);
            if (args[0].startsWith('user-')) throw new Error('connection lost after commit');
            return result;
          },
        },
      });
      const lossy: CommandDeps = { ...deps, store: flaky, handler: new CommandHandler(flaky) };
      expect(await rejection(addUser(lossy, user(orgId, 'kept@example.com'), ctx()))).to.match(/connection lost/);
      expect((await store.readStream(claimStream(orgId, 'kept@example.com'))).map((e) => e.type)).to.deep.equal(['MemberEmailClaimed']);
      expect(await rejection(addUser(deps, user(orgId, 'kept@example.com'), ctx()))).to.be.instanceOf(ConflictError);
    });

    it('refuses the address of a user added before addresses were claimed (found in the users read model)', async () => {
      const orgId = await organization();
      await knex('users_g1').insert({
        _commit: 0,
        _prepare: 0,
        user_id: 999_999_002,
        org_id: orgId,
        email: 'legacy@example.com',
        first_name: 'Old',
        last_name: 'Timer',
        password_hash: null,
        roles: [],
        invite_allowance: null,
        created_at: NOW,
      });
      expect(await rejection(addUser(deps, user(orgId, 'Legacy@example.com'), ctx()))).to.be.instanceOf(ConflictError);
    });
  });

  describe('API keys', () => {
    let orgId: number;
    let adminId: number;
    let memberId: number;

    before(async () => {
      orgId = await organization();
      adminId = (await addUser(deps, { orgId, email: 'admin@example.com', firstName: 'A', lastName: 'Admin', roles: ['admin'] }, ctx())).userId;
      memberId = (await addUser(deps, { orgId, email: 'm@example.com', firstName: 'M', lastName: 'Member', roles: ['self_invite'] }, ctx())).userId;
    });

    it('returns the key once and records only its SHA-256', async () => {
      const { keyId, apiKey } = await createApiKey(
        deps,
        { orgId, userId: adminId, scopes: ['org:passes:write', 'org:passes:read'], expiresAt: '2027-01-01', allowedIps: ['10.1.2.3/8'], name: ' Billing sync ' },
        ctx(),
      );
      expect(apiKey).to.match(/^svc_sk_[A-Za-z0-9_-]{43}$/);
      expect(keyId).to.match(/^key_[0-9a-f]{24}$/);
      const events = await store.readStream(streams.apiKey(keyId));
      expect(JSON.stringify(events.map((e) => e.data))).not.to.include(apiKey.slice('svc_sk_'.length));
      expect(events[0]!.data as ApiKeyCreated['data']).to.deep.equal({
        keyId,
        orgId,
        userId: adminId,
        keyHash: createHash('sha256').update(apiKey).digest('hex'),
        scopes: ['org:passes:read', 'org:passes:write'],
        expiresAt: '2027-01-01T00:00:00.000Z',
        allowedIps: ['10.0.0.0/8'],
        name: 'Billing sync',
      });
    });

    it('needs an admin of the organization', async () => {
      const notAdmin = await rejection(createApiKey(deps, { orgId, userId: memberId, scopes: ['org:passes:read'] }, ctx()));
      expect(notAdmin).to.be.instanceOf(ConflictError).with.property('message').that.matches(/not an admin/);
      const otherOrg = await rejection(createApiKey(deps, { orgId: orgId + 1000, userId: adminId, scopes: ['org:passes:read'] }, ctx()));
      expect(otherOrg).to.be.instanceOf(NotFoundError);
    });

    it('refuses bad scopes, a past expiry and a bad CIDR', async () => {
      const attempt = (input: Partial<Parameters<typeof createApiKey>[1]>) =>
        rejection(createApiKey(deps, { orgId, userId: adminId, scopes: ['org:passes:read'], ...input }, ctx()));
      expect(await attempt({ scopes: [] })).to.be.instanceOf(ValidationError);
      expect(await attempt({ scopes: ['admin'] })).to.be.instanceOf(ValidationError);
      expect(await attempt({ expiresAt: '2026-03-01T00:00:00Z' })).to.be.instanceOf(ValidationError);
      expect(await attempt({ expiresAt: 'next year' })).to.be.instanceOf(ValidationError);
      expect(await attempt({ allowedIps: ['10.0.0.0/40'] })).to.be.instanceOf(ValidationError);
    });

    it('revokes once, then reports nothing changed; unknown keys are 404', async () => {
      const { keyId } = await createApiKey(deps, { orgId, userId: adminId, scopes: ['org:passes:read'] }, ctx());
      expect((await revokeApiKey(deps, { keyId }, ctx())).revoked).to.equal(true);
      expect((await revokeApiKey(deps, { keyId }, ctx())).revoked).to.equal(false);
      expect(await rejection(revokeApiKey(deps, { keyId: 'key_000000000000000000000000' }, ctx()))).to.be.instanceOf(NotFoundError);
      expect(await rejection(revokeApiKey(deps, { keyId: 'no such/key' }, ctx()))).to.be.instanceOf(NotFoundError);
      expect(await rejection(revokeApiKey(deps, { keyId, orgId: orgId + 1 }, ctx()))).to.be.instanceOf(NotFoundError);
    });
  });
});
