import { expect } from 'chai';
import { passkeyCredentialKey, signInCredentialsProjection } from '../../projections/sign-in-credentials-projection.js';
import { EventLog, feed, feedOneByOne, visible } from './fixtures.js';
import type { PasskeyRegistered } from '../../shared/oauth/oauth-events.js';

describe('sign-in credentials projection', () => {
  const registered = (userId: number, credentialId: string): PasskeyRegistered => ({
    type: 'PasskeyRegistered',
    data: { userId, credentialId, publicKey: 'cGs', counter: 0, transports: [] },
  });

  it('finds a passkey user until the passkey is removed, and again once it is registered anew', () => {
    const log = new EventLog();
    log.add(registered(7, 'Y3JlZDE'));
    log.add(registered(7, 'Y3JlZDI'));
    log.add({ type: 'PasskeyRemoved', data: { userId: 7, credentialId: 'Y3JlZDE' } });
    const rows = feed(signInCredentialsProjection, log.events);
    expect(Object.keys(visible(rows))).to.deep.equal([passkeyCredentialKey('Y3JlZDI')]);

    const again = log.add(registered(7, 'Y3JlZDE'));
    expect(visible(feed(signInCredentialsProjection, [again], rows))[passkeyCredentialKey('Y3JlZDE')]).to.include({ kind: 'passkey', user_id: 7 });
  });

  it("keeps a passkey row when another user removes the same credential id (registered twice, the first owner keeps it)", () => {
    const log = new EventLog();
    log.add(registered(7, 'Y3JlZDE'));
    log.add(registered(8, 'Y3JlZDE'));
    log.add({ type: 'PasskeyRemoved', data: { userId: 8, credentialId: 'Y3JlZDE' } });
    expect(visible(feed(signInCredentialsProjection, log.events))[passkeyCredentialKey('Y3JlZDE')]).to.include({ user_id: 7 });
  });

  it('ignores the removal of a passkey it never saw, and gives the same rows fed one by one', () => {
    const log = new EventLog();
    log.add({ type: 'PasskeyRemoved', data: { userId: 7, credentialId: 'dW5rbm93bg' } });
    log.add(registered(8, 'Y3JlZDM'));
    expect(visible(feed(signInCredentialsProjection, log.events))).to.deep.equal(visible(feedOneByOne(signInCredentialsProjection, log.events)));
    expect(Object.keys(visible(feed(signInCredentialsProjection, log.events)))).to.deep.equal([passkeyCredentialKey('Y3JlZDM')]);
  });
});
