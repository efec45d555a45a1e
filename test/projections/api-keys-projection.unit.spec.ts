import { expect } from 'chai';
import { apiKeysProjection } from '../../projections/api-keys-projection.js';
import { EventLog, feed, feedOneByOne, snapshot, visible } from './fixtures.js';

describe('api_keys projection', () => {
  const history = () => {
    const log = new EventLog();
    log.add({
      type: 'ApiKeyCreated',
      data: {
        keyId: 'key-a',
        orgId: 1,
        userId: 100,
        keyHash: 'a'.repeat(64),
        scopes: ['org:passes:read', 'org:passes:write'],
        expiresAt: '2026-01-01T00:00:00.000Z',
        allowedIps: ['10.0.0.0/8'],
        name: 'Reception kiosk',
      },
    });
    log.add({
      type: 'ApiKeyCreated',
      data: { keyId: 'key-b', orgId: 1, userId: 100, keyHash: 'b'.repeat(64), scopes: ['org:facilities:read'], expiresAt: null, allowedIps: [], name: null },
    });
    log.add({ type: 'ApiKeyRevoked', data: { keyId: 'key-b', orgId: 1 } });
    return log;
  };

  it('stores the name, hash, scopes, expiry and allowlist, and marks revocations', () => {
    const log = history();
    const rows = visible(feed(apiKeysProjection, log.events));
    expect(rows['key-a']).to.deep.equal({
      key_id: 'key-a',
      org_id: 1,
      user_id: 100,
      key_hash: 'a'.repeat(64),
      scopes: ['org:passes:read', 'org:passes:write'],
      expires_at: new Date('2026-01-01T00:00:00.000Z'),
      allowed_ips: ['10.0.0.0/8'],
      name: 'Reception kiosk',
      revoked: false,
      created_at: new Date(log.events[0]!.metadata.occurredAt),
    });
    expect(rows['key-b']).to.include({ revoked: true, expires_at: null, name: null });
  });

  it('is idempotent when the same events are fed twice', () => {
    const log = history();
    const once = snapshot(feed(apiKeysProjection, log.events));
    expect(visible(feed(apiKeysProjection, log.events, snapshot(once)))).to.deep.equal(visible(once));
    expect(visible(feedOneByOne(apiKeysProjection, [...log.events, ...log.events]))).to.deep.equal(visible(once));
  });
});
