import { expect } from 'chai';
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { CEREMONY_TTL_SECONDS, PasskeyChallenges } from '../../../command-service/sign-in/passkeys/passkey-challenges.js';
import { createKnex } from '../../../shared/db/knex.js';
import { migratedDatabase } from '../../support/database.js';

const NOW = new Date('2025-06-01T10:00:00Z');
const later = (seconds: number) => new Date(NOW.getTime() + seconds * 1000);

describe('passkey challenges (PostgreSQL)', function () {
  this.timeout(30_000);
  let url: string;
  let knex: Knex;
  let challenges: PasskeyChallenges;

  before(async () => {
    ({ url, knex } = await migratedDatabase('passkey_challenges'));
    challenges = new PasskeyChallenges(knex);
  });

  after(async () => {
    await knex?.destroy();
  });

  const count = async () => Number((await knex.raw('SELECT count(*) AS n FROM passkey_ceremonies')).rows[0].n);

  it('gives a ceremony back once', async () => {
    const handle = await challenges.begin({ purpose: 'registration', challenge: 'c1', userId: 7 }, NOW);
    expect(await challenges.take(handle, 'registration', NOW)).to.deep.equal({
      purpose: 'registration',
      challenge: 'c1',
      userId: 7,
      expiresAt: later(CEREMONY_TTL_SECONDS),
    });
    expect(await challenges.take(handle, 'registration', NOW)).to.equal(null);
  });

  it('gives it back to another instance than the one that began it, once between them', async () => {
    const other = createKnex(url, { max: 2 });
    try {
      const handle = await challenges.begin({ purpose: 'authentication', challenge: 'c2', userId: null }, NOW);
      const takers = [new PasskeyChallenges(other), challenges, new PasskeyChallenges(other)];
      const taken = await Promise.all(takers.map((t) => t.take(handle, 'authentication', NOW)));
      expect(taken.filter((c) => c !== null).map((c) => c!.challenge)).to.deep.equal(['c2']);
    } finally {
      await other.destroy();
    }
  });

  it('stores only a hash of the handle', async () => {
    const handle = await challenges.begin({ purpose: 'authentication', challenge: 'c3', userId: null }, NOW);
    const hash = createHash('sha256').update(handle).digest();
    const { rows } = await knex.raw('SELECT handle_hash FROM passkey_ceremonies WHERE handle_hash = ?', [hash]);
    expect(rows).to.have.length(1);
    const { rows: plain } = await knex.raw("SELECT 1 FROM passkey_ceremonies WHERE encode(handle_hash, 'escape') = ?", [handle]);
    expect(plain).to.have.length(0);
    await challenges.take(handle, 'authentication', NOW);
  });

  it('refuses an expired ceremony, and spends it', async () => {
    const handle = await challenges.begin({ purpose: 'authentication', challenge: 'c1', userId: null }, NOW);
    expect(await challenges.take(handle, 'authentication', later(CEREMONY_TTL_SECONDS))).to.equal(null);
    expect(await challenges.take(handle, 'authentication', NOW)).to.equal(null);
  });

  it('refuses a ceremony of the other purpose, and spends it', async () => {
    const handle = await challenges.begin({ purpose: 'registration', challenge: 'c1', userId: 7 }, NOW);
    expect(await challenges.take(handle, 'authentication', NOW)).to.equal(null);
    expect(await challenges.take(handle, 'registration', NOW)).to.equal(null);
  });

  it('refuses an unknown or missing handle', async () => {
    const handle = await challenges.begin({ purpose: 'authentication', challenge: 'c1', userId: null }, NOW);
    expect(await challenges.take('someone-elses-handle', 'authentication', NOW)).to.equal(null);
    expect(await challenges.take(undefined, 'authentication', NOW)).to.equal(null);
    expect(await challenges.take(handle, 'authentication', NOW)).to.include({ challenge: 'c1' });
  });

  it("replaces the browser's previous ceremony", async () => {
    const first = await challenges.begin({ purpose: 'authentication', challenge: 'c1', userId: null }, NOW);
    const second = await challenges.begin({ purpose: 'authentication', challenge: 'c2', userId: null }, NOW, first);
    expect(await challenges.take(first, 'authentication', NOW)).to.equal(null);
    expect((await challenges.take(second, 'authentication', NOW))?.challenge).to.equal('c2');
  });

  it("replaces the browser's previous ceremony when it has expired already (swept and replaced by one statement)", async () => {
    await knex.raw('DELETE FROM passkey_ceremonies');
    const first = await challenges.begin({ purpose: 'authentication', challenge: 'c1', userId: null }, NOW);
    const second = await challenges.begin({ purpose: 'authentication', challenge: 'c2', userId: null }, later(CEREMONY_TTL_SECONDS + 1), first);
    expect(await count()).to.equal(1);
    expect((await challenges.take(second, 'authentication', later(CEREMONY_TTL_SECONDS + 1)))?.challenge).to.equal('c2');
  });

  it('sweeps a bounded number of expired ceremonies per begin', async () => {
    await knex.raw('DELETE FROM passkey_ceremonies');
    for (let i = 0; i < 150; i++) await challenges.begin({ purpose: 'authentication', challenge: `old${i}`, userId: null }, NOW);
    await challenges.begin({ purpose: 'authentication', challenge: 'new', userId: null }, later(CEREMONY_TTL_SECONDS));
    expect(await count()).to.equal(51); // 100 of the 150 expired ones, and the new one
    await challenges.begin({ purpose: 'authentication', challenge: 'newer', userId: null }, later(CEREMONY_TTL_SECONDS));
    expect(await count()).to.equal(2);
  });

  it('removes expired ceremonies as new ones begin, keeping the live ones', async () => {
    await knex.raw('DELETE FROM passkey_ceremonies');
    for (let i = 0; i < 3; i++) await challenges.begin({ purpose: 'authentication', challenge: `old${i}`, userId: null }, NOW);
    const live = await challenges.begin({ purpose: 'authentication', challenge: 'live', userId: null }, later(CEREMONY_TTL_SECONDS - 1));
    expect(await count()).to.equal(4); // none of the first three had expired yet
    await challenges.begin({ purpose: 'authentication', challenge: 'new', userId: null }, later(CEREMONY_TTL_SECONDS));
    expect(await count()).to.equal(2);
    expect((await challenges.take(live, 'authentication', later(CEREMONY_TTL_SECONDS)))?.challenge).to.equal('live');
  });
});
