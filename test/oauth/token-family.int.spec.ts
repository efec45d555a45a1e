// Refresh-token rotation and code redemption through the real PostgreSQL event store: the
// expected revision, not luck or in-process serialisation, is what lets only one of two
// concurrent requests succeed. Two CommandHandlers over separate pools act as two processes.
import { expect } from 'chai';
import { CommandHandler, type CommandContext } from '../../shared/event-store/command-handler.js';
import type {
  AppendResult,
  EventStore,
  ExpectedRevision,
  NewEvent,
  ReadStreamOptions,
  RecordedEvent,
} from '../../shared/event-store/event-store.js';
import { createPostgresEventStore } from '../../shared/event-store/postgres-event-store.js';
import { ValidatingEventStore } from '../../shared/event-store/validating-event-store.js';
import { authorizationCodeDecider, redemptionOutcome } from '../../shared/oauth/authorization-code-decider.js';
import { InvalidGrant } from '../../shared/oauth/oauth-errors.js';
import { oauthStreams, type TokenFamilyEvent } from '../../shared/oauth/oauth-events.js';
import { eventSchemas } from '../../shared/domain/event-schemas.js';
import { newAuthorizationCode, newFamilyId, newRefreshToken, parseRefreshToken } from '../../shared/oauth/opaque-credentials.js';
import { assertRotated, tokenFamilyDecider } from '../../shared/oauth/token-family-decider.js';
import { migratedDatabaseUrl } from '../support/database.js';
import { CHALLENGE, VERIFIER, grant } from './oauth-fixtures.js';

const context = (): CommandContext => ({ correlationId: 'oauth-int', actor: { kind: 'system', name: 'oauth-test' }, now: new Date() });

/** Holds every first append until `parties` appends are waiting, so the racers all read the same revision. */
class Barrier {
  private waiting: Array<() => void> = [];
  constructor(private parties: number) {}
  arrive(): Promise<void> {
    if (this.parties <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      if (this.waiting.length === this.parties) {
        this.parties = 0;
        for (const release of this.waiting.splice(0)) release();
      }
    });
  }
}

/** A real store that can be made to wait at a barrier before appending, and counts lost races. */
class RacingStore implements EventStore {
  barrier: Barrier | null = null;
  conflicts = 0;
  constructor(private readonly inner: EventStore) {}
  async appendToStream(streamName: string, events: readonly NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    const barrier = this.barrier;
    this.barrier = null;
    if (barrier) await barrier.arrive();
    try {
      return await this.inner.appendToStream(streamName, events, expected);
    } catch (error) {
      this.conflicts++;
      throw error;
    }
  }
  readStream = (name: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> => this.inner.readStream(name, options);
  readStreams = (...args: Parameters<EventStore['readStreams']>) => this.inner.readStreams(...args);
  readAll = (...args: Parameters<EventStore['readAll']>) => this.inner.readAll(...args);
  subscribeToAll = (...args: Parameters<EventStore['subscribeToAll']>) => this.inner.subscribeToAll(...args);
  headPosition = () => this.inner.headPosition();
  identity = () => this.inner.identity();
  close = () => this.inner.close();
}

describe('token families over the PostgreSQL event store', function () {
  this.timeout(60_000);
  let url = '';
  const stores: EventStore[] = [];

  before(async () => {
    url = await migratedDatabaseUrl('oauth_token_family');
  });

  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
  });

  function process(): { handler: CommandHandler; store: RacingStore } {
    const store = new RacingStore(new ValidatingEventStore(createPostgresEventStore(url, { maxConnections: 4 }), eventSchemas));
    stores.push(store);
    return { handler: new CommandHandler(store), store };
  }

  /** Issue a code, redeem it and open its family with a first refresh token, as the token endpoint will. */
  async function startFamily(handler: CommandHandler): Promise<{ familyId: string; refreshToken: string }> {
    const code = newAuthorizationCode();
    const familyId = newFamilyId();
    const redirectUri = 'https://app.example.com/callback';
    const now = new Date().toISOString();
    const codeStream = oauthStreams.authorizationCode(code.hash);
    await handler.handle(
      codeStream,
      authorizationCodeDecider,
      { type: 'IssueAuthorizationCode', data: { ...grant, codeHash: code.hash, familyId, redirectUri, codeChallenge: CHALLENGE, nonce: null, now } },
      context(),
    );
    const redeemed = await handler.handle(
      codeStream,
      authorizationCodeDecider,
      { type: 'RedeemAuthorizationCode', data: { codeHash: code.hash, clientId: grant.clientId, redirectUri, codeVerifier: VERIFIER, now } },
      context(),
    );
    expect(redemptionOutcome(redeemed.events)).to.deep.equal({ kind: 'redeemed', familyId });
    const { state } = await handler.load(codeStream, authorizationCodeDecider);
    if (state.status !== 'redeemed') throw new Error('code not redeemed');
    const refresh = newRefreshToken(familyId);
    const { codeHash, scopes, clientId, orgId, userId, authTime, amr, sid } = state.code;
    await handler.handle(
      oauthStreams.tokenFamily(familyId),
      tokenFamilyDecider,
      {
        type: 'StartTokenFamily',
        data: { familyId, codeHash, scopes, clientId, orgId, userId, authTime, amr, sid, refreshTokenHash: refresh.hash, expiresAt: new Date(Date.now() + 86_400_000).toISOString() },
      },
      context(),
    );
    return { familyId, refreshToken: refresh.value };
  }

  function rotate(handler: CommandHandler, presented: string) {
    const parsed = parseRefreshToken(presented)!;
    const next = newRefreshToken(parsed.familyId);
    return handler
      .handle(
        oauthStreams.tokenFamily(parsed.familyId),
        tokenFamilyDecider,
        { type: 'RotateRefreshToken', data: { familyId: parsed.familyId, clientId: grant.clientId, presentedTokenHash: parsed.hash, newTokenHash: next.hash, now: new Date().toISOString() } },
        context(),
      )
      .then((result) => {
        assertRotated(result.events as TokenFamilyEvent[]);
        return next.value;
      });
  }

  it('rotates a refresh token, and a replay of the spent one revokes the family', async () => {
    const { handler } = process();
    const { familyId, refreshToken } = await startFamily(handler);
    const second = await rotate(handler, refreshToken);
    await rotate(handler, refreshToken).then(
      () => expect.fail('a spent token must not rotate'),
      (error) => expect(error).to.be.instanceOf(InvalidGrant),
    );
    // The newest token is dead too: the whole family was revoked, and that fact is in the log.
    await rotate(handler, second).then(
      () => expect.fail('a revoked family must not rotate'),
      (error) => expect(error).to.be.instanceOf(InvalidGrant),
    );
    const { state } = await handler.load(oauthStreams.tokenFamily(familyId), tokenFamilyDecider);
    expect(state.status).to.equal('revoked');
  });

  it('two processes refreshing one token at once: exactly one succeeds, and the family ends revoked', async () => {
    const [one, two] = [process(), process()];
    const { familyId, refreshToken } = await startFamily(one.handler);
    // Both read the family at the same revision before either appends.
    const barrier = new Barrier(2);
    one.store.barrier = barrier;
    two.store.barrier = barrier;
    const results = await Promise.allSettled([rotate(one.handler, refreshToken), rotate(two.handler, refreshToken)]);

    const succeeded = results.filter((r) => r.status === 'fulfilled');
    const failed = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    expect(succeeded).to.have.length(1);
    expect(failed).to.have.length(1);
    expect(failed[0]).to.be.instanceOf(InvalidGrant);
    // The loser lost on the expected revision and was re-decided, not serialised in-process.
    expect(one.store.conflicts + two.store.conflicts).to.equal(1);

    const stored = await one.store.readStream(oauthStreams.tokenFamily(familyId));
    expect(stored.map((e) => e.type)).to.deep.equal(['TokenFamilyStarted', 'RefreshTokenRotated', 'TokenFamilyRevoked']);
    expect(stored[2]!.data).to.deep.equal({ familyId, reason: 'refresh_token_replay' });
    // The winner's new token is refused as well.
    await rotate(one.handler, (succeeded[0] as PromiseFulfilledResult<string>).value).then(
      () => expect.fail('the family is revoked'),
      (error) => expect(error).to.be.instanceOf(InvalidGrant),
    );
  });

  it('ten concurrent refreshes of one token from one process: one success, family revoked', async () => {
    const { handler, store } = process();
    const { familyId, refreshToken } = await startFamily(handler);
    const results = await Promise.allSettled(Array.from({ length: 10 }, () => rotate(handler, refreshToken)));
    expect(results.filter((r) => r.status === 'fulfilled')).to.have.length(1);
    const stored = await store.readStream(oauthStreams.tokenFamily(familyId));
    expect(stored.map((e) => e.type)).to.deep.equal(['TokenFamilyStarted', 'RefreshTokenRotated', 'TokenFamilyRevoked']);
  });

  it('a code redeemed twice at once by two processes: one redemption, one replay, and the family ends revoked', async () => {
    const [one, two] = [process(), process()];
    const code = newAuthorizationCode();
    const familyId = newFamilyId();
    const redirectUri = 'https://app.example.com/callback';
    const codeStream = oauthStreams.authorizationCode(code.hash);
    const now = new Date().toISOString();
    await one.handler.handle(
      codeStream,
      authorizationCodeDecider,
      { type: 'IssueAuthorizationCode', data: { ...grant, codeHash: code.hash, familyId, redirectUri, codeChallenge: CHALLENGE, nonce: 'n', now } },
      context(),
    );
    const barrier = new Barrier(2);
    one.store.barrier = barrier;
    two.store.barrier = barrier;
    const redeem = (handler: CommandHandler) =>
      handler.handle(
        codeStream,
        authorizationCodeDecider,
        { type: 'RedeemAuthorizationCode', data: { codeHash: code.hash, clientId: grant.clientId, redirectUri, codeVerifier: VERIFIER, now } },
        context(),
      );
    const outcomes = (await Promise.all([redeem(one.handler), redeem(two.handler)])).map((r) => redemptionOutcome(r.events));
    expect(outcomes.map((o) => o.kind).sort()).to.deep.equal(['redeemed', 'replayed']);

    // The token endpoint's two paths, racing: the replay revokes the family, the redemption opens it.
    const family = oauthStreams.tokenFamily(familyId);
    const start = one.handler.handle(
      family,
      tokenFamilyDecider,
      { type: 'StartTokenFamily', data: { ...grant, familyId, codeHash: code.hash, refreshTokenHash: newRefreshToken(familyId).hash, expiresAt: new Date(Date.now() + 86_400_000).toISOString() } },
      context(),
    );
    const revoke = two.handler.handle(family, tokenFamilyDecider, { type: 'RevokeTokenFamily', data: { familyId, reason: 'authorization_code_replay' } }, context());
    await Promise.allSettled([start, revoke]);
    const stored = await one.store.readStream(family);
    expect(stored.at(-1)!.type).to.equal('TokenFamilyRevoked');
    expect(stored.at(-1)!.data).to.deep.equal({ familyId, reason: 'authorization_code_replay' });
    // Whichever order they ran in, no token of the family can ever rotate.
    const { state } = await two.handler.load(family, tokenFamilyDecider);
    expect(state.status).to.equal('revoked');
  });
});
