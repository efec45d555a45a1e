// The protocol endpoints' client lookups: concurrent lookups share one query, found clients are
// reused briefly, unknown ids never are.
import { expect } from 'chai';
import type { ClientDirectory, OAuthClient } from '../../../shared/oauth/client-decider.js';
import { CoalescingClientDirectory } from '../../../command-service/oauth/coalescing-client-directory.js';
import { CONFIDENTIAL_CLIENT, PUBLIC_CLIENT } from '../oauth-fixtures.js';

class CountingDirectory implements ClientDirectory {
  calls = 0;
  clients = new Map<string, OAuthClient>([[PUBLIC_CLIENT.clientId, PUBLIC_CLIENT]]);
  fail = false;
  async findClient(clientId: string): Promise<OAuthClient | null> {
    this.calls++;
    await new Promise((resolve) => setImmediate(resolve));
    if (this.fail) throw new Error('database down');
    return this.clients.get(clientId) ?? null;
  }
}

describe('CoalescingClientDirectory', () => {
  let now = 0;
  const clock = () => now;
  beforeEach(() => {
    now = 1_000_000;
  });

  it('answers concurrent lookups of one client with one query', async () => {
    const inner = new CountingDirectory();
    const directory = new CoalescingClientDirectory(inner, { maxAgeMs: 0, clock });
    const found = await Promise.all([1, 2, 3, 4].map(() => directory.findClient(PUBLIC_CLIENT.clientId)));
    expect(found).to.deep.equal([PUBLIC_CLIENT, PUBLIC_CLIENT, PUBLIC_CLIENT, PUBLIC_CLIENT]);
    expect(inner.calls).to.equal(1);
    // maxAgeMs 0: nothing is kept once the query is done.
    await directory.findClient(PUBLIC_CLIENT.clientId);
    expect(inner.calls).to.equal(2);
  });

  it('reuses a found client for maxAgeMs, then asks again and sees a deletion', async () => {
    const inner = new CountingDirectory();
    const directory = new CoalescingClientDirectory(inner, { maxAgeMs: 1000, clock });
    await directory.findClient(PUBLIC_CLIENT.clientId);
    now += 999;
    expect(await directory.findClient(PUBLIC_CLIENT.clientId)).to.equal(PUBLIC_CLIENT);
    expect(inner.calls).to.equal(1);
    inner.clients.delete(PUBLIC_CLIENT.clientId);
    now += 1;
    expect(await directory.findClient(PUBLIC_CLIENT.clientId)).to.equal(null);
    expect(inner.calls).to.equal(2);
  });

  it('never remembers an unknown client, so a newly registered one is found at once', async () => {
    const inner = new CountingDirectory();
    const directory = new CoalescingClientDirectory(inner, { maxAgeMs: 60_000, clock });
    expect(await directory.findClient(CONFIDENTIAL_CLIENT.clientId)).to.equal(null);
    inner.clients.set(CONFIDENTIAL_CLIENT.clientId, CONFIDENTIAL_CLIENT);
    expect(await directory.findClient(CONFIDENTIAL_CLIENT.clientId)).to.equal(CONFIDENTIAL_CLIENT);
    expect(inner.calls).to.equal(2);
  });

  it('passes a failed query to every waiting caller and retries on the next lookup', async () => {
    const inner = new CountingDirectory();
    inner.fail = true;
    const directory = new CoalescingClientDirectory(inner, { clock });
    const results = await Promise.allSettled([directory.findClient(PUBLIC_CLIENT.clientId), directory.findClient(PUBLIC_CLIENT.clientId)]);
    expect(results.map((r) => r.status)).to.deep.equal(['rejected', 'rejected']);
    inner.fail = false;
    expect(await directory.findClient(PUBLIC_CLIENT.clientId)).to.equal(PUBLIC_CLIENT);
    expect(inner.calls).to.equal(2);
  });

  it('keeps at most maxEntries clients, dropping the oldest', async () => {
    const inner = new CountingDirectory();
    inner.clients.set(CONFIDENTIAL_CLIENT.clientId, CONFIDENTIAL_CLIENT);
    const directory = new CoalescingClientDirectory(inner, { maxAgeMs: 60_000, maxEntries: 1, clock });
    await directory.findClient(PUBLIC_CLIENT.clientId);
    await directory.findClient(CONFIDENTIAL_CLIENT.clientId);
    await directory.findClient(CONFIDENTIAL_CLIENT.clientId);
    expect(inner.calls).to.equal(2);
    await directory.findClient(PUBLIC_CLIENT.clientId);
    expect(inner.calls).to.equal(3);
  });
});
