import { expect } from 'chai';
import { apiKeyDecider, normaliseCidr, type ApiKeyCommand, type ApiKeyEvent } from '../../shared/domain/api-key-decider.js';
import { ConflictError, NotFoundError, ValidationError } from '../../shared/errors.js';
import { deciderSpec } from '../support/given-when-then.js';
import { sha256 } from '../support/domain-fixtures.js';

const spec = deciderSpec(apiKeyDecider);
const keyId = 'key_0123456789abcdef01234567';
const keyHash = sha256('svc_sk_secret');
const now = '2026-03-01T12:00:00.000Z';
type CreateData = Extract<ApiKeyCommand, { type: 'CreateApiKey' }>['data'];
type CreatedData = Extract<ApiKeyEvent, { type: 'ApiKeyCreated' }>['data'];
const create = (overrides: Partial<CreateData> = {}): ApiKeyCommand => ({
  type: 'CreateApiKey',
  data: { keyId, orgId: 1, userId: 100, keyHash, scopes: ['org:passes:write'], expiresAt: null, allowedIps: [], now, ...overrides },
});
const created = (overrides: Partial<CreatedData> = {}): ApiKeyEvent => ({
  type: 'ApiKeyCreated',
  data: { keyId, orgId: 1, userId: 100, keyHash, scopes: ['org:passes:write'], expiresAt: null, allowedIps: [], name: null, ...overrides },
});
const revokedEvent: ApiKeyEvent = { type: 'ApiKeyRevoked', data: { keyId, orgId: 1 } };

describe('API key decider', () => {
  describe('CreateApiKey', () => {
    it('creates a key holding only its hash', () => {
      spec.given([]).when(create()).then([created()]);
    });

    it('deduplicates scopes and orders them as the catalogue does', () => {
      spec
        .given([])
        .when(create({ scopes: ['org:passes:write', 'org:passes:read', 'org:passes:write'] }))
        .then([created({ scopes: ['org:passes:read', 'org:passes:write'] })]);
    });

    it('keeps a name trimmed, and refuses an empty one or one over 100 characters', () => {
      spec.given([]).when(create({ name: '  Reception kiosk ' })).then([created({ name: 'Reception kiosk' })]);
      spec.given([]).when(create({ name: 'é'.repeat(100) })).then([created({ name: 'é'.repeat(100) })]);
      spec.given([]).when(create({ name: '   ' })).thenThrows(ValidationError, /name must not be empty/);
      spec.given([]).when(create({ name: 'x'.repeat(101) })).thenThrows(ValidationError, /at most 100 characters/);
    });

    it('refuses no scopes and unknown scopes', () => {
      spec.given([]).when(create({ scopes: [] })).thenThrows(ValidationError, /at least one scope/);
      spec.given([]).when(create({ scopes: ['passes:read'] })).thenThrows(ValidationError, /unknown scope/);
    });

    it('normalises a future expiry to UTC', () => {
      spec
        .given([])
        .when(create({ expiresAt: '2026-03-02T01:00:00+01:00' }))
        .then([created({ expiresAt: '2026-03-02T00:00:00.000Z' })]);
    });

    it('refuses an expiry now or in the past, a malformed one, or one without a zone', () => {
      spec.given([]).when(create({ expiresAt: now })).thenThrows(ValidationError, /future/);
      spec.given([]).when(create({ expiresAt: '2020-01-01T00:00:00Z' })).thenThrows(ValidationError, /future/);
      spec.given([]).when(create({ expiresAt: 'tomorrow' })).thenThrows(ValidationError);
      spec.given([]).when(create({ expiresAt: '2027-02-30T00:00:00Z' })).thenThrows(ValidationError);
      spec.given([]).when(create({ expiresAt: '2027-01-01T00:00:00' })).thenThrows(ValidationError, /offset/);
    });

    it('normalises the IP allowlist and drops duplicates', () => {
      spec
        .given([])
        .when(create({ allowedIps: ['10.1.2.3/8', '192.0.2.7', '2001:DB8::1', '10.0.0.0/8'] }))
        .then([created({ allowedIps: ['10.0.0.0/8', '192.0.2.7/32', '2001:db8::1/128'] })]);
    });

    it('refuses invalid CIDRs', () => {
      for (const bad of ['10.0.0.0/33', '300.1.1.1', 'example.com', '10.0.0.0/', '0x0a.0.0.1', 'fe80::1%eth0', '::/129', '10.0.0.0/+8']) {
        spec.given([]).when(create({ allowedIps: [bad] })).thenThrows(ValidationError);
      }
    });

    it('refuses anything but a SHA-256 hex hash, so a key in clear can never be recorded', () => {
      spec.given([]).when(create({ keyHash: 'svc_sk_secret' })).thenThrows(ValidationError, /SHA-256/);
    });

    it('refuses to create the same key twice', () => {
      spec.given([created()]).when(create()).thenThrows(ConflictError);
    });
  });

  describe('RevokeApiKey', () => {
    it('revokes an active key', () => {
      spec.given([created()]).when({ type: 'RevokeApiKey', data: { keyId } }).then([revokedEvent]);
    });
    it('is a no-op on a revoked key', () => {
      spec.given([created(), revokedEvent]).when({ type: 'RevokeApiKey', data: { keyId } }).thenNothing();
    });
    it('is 404 for an unknown key or one of another organization', () => {
      spec.given([]).when({ type: 'RevokeApiKey', data: { keyId } }).thenThrows(NotFoundError);
      spec.given([created()]).when({ type: 'RevokeApiKey', data: { keyId, orgId: 2 } }).thenThrows(NotFoundError);
    });
  });

  describe('normaliseCidr', () => {
    it('masks host bits and gives single addresses their full prefix', () => {
      expect(normaliseCidr(' 192.168.1.77/24 ')).to.equal('192.168.1.0/24');
      expect(normaliseCidr('0.0.0.0/0')).to.equal('0.0.0.0/0');
      expect(normaliseCidr('2001:db8:0:0:0:0:0:1')).to.equal('2001:db8::1/128');
      expect(normaliseCidr('::ffff:10.0.0.0/104')).to.equal('::ffff:10.0.0.0/104');
    });
  });
});
