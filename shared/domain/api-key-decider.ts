// An organization API key. The key itself never reaches the decider: only its SHA-256 hash.
// Scopes, expiry and the source-IP allowlist are fixed at creation (spec); revocation is final and
// revoking twice is a no-op.
import ipaddr from 'ipaddr.js';
import type { Decider } from './decider.js';
import { ORG_SCOPES, type ApiKeyCreated, type ApiKeyRevoked, type OrgScope } from './events.js';
import { parseIsoInstant } from './iso-time.js';
import { ConflictError, NotFoundError, ValidationError } from '../errors.js';

export const MAX_ALLOWED_IPS = 50;
export const MAX_API_KEY_NAME_LENGTH = 100;
const SHA256_HEX = /^[0-9a-f]{64}$/;

export type ApiKeyEvent = ApiKeyCreated | ApiKeyRevoked;

export type ApiKeyCommand =
  | {
      type: 'CreateApiKey';
      data: {
        keyId: string;
        orgId: number;
        userId: number;
        keyHash: string;
        scopes: readonly string[];
        /** ISO 8601 with `Z` or an offset; must lie after `now`. */
        expiresAt: string | null;
        /** CIDRs or single addresses, IPv4 or IPv6. */
        allowedIps: readonly string[];
        /** What the admin calls the key; trimmed, 1 to 100 characters. Null or omitted: unnamed. */
        name?: string | null;
        /** ISO 8601 time of the request: the decider reads no clock. */
        now: string;
      };
    }
  | { type: 'RevokeApiKey'; data: { keyId: string; orgId?: number } };

interface ApiKeyFacts {
  keyId: string;
  orgId: number;
  userId: number;
  scopes: readonly OrgScope[];
  expiresAt: string | null;
  allowedIps: readonly string[];
}

export type ApiKeyState = { status: 'absent' } | ({ status: 'active' } & ApiKeyFacts) | ({ status: 'revoked' } & ApiKeyFacts);

/**
 * `10.1.2.3/8` -> `10.0.0.0/8`, `2001:DB8::1` -> `2001:db8::1/128`, `192.0.2.7` -> `192.0.2.7/32`.
 * IPv4 must be dotted four-part decimal: ipaddr.js would also take `0x0a.1` or `167772161`, which
 * nobody means in an allowlist. Zone ids (`fe80::1%eth0`) are refused: they are host-local.
 */
export function normaliseCidr(text: string): string {
  const value = text.trim();
  const invalid = () => new ValidationError(`"${text}" is not an IP address or CIDR range`);
  const slash = value.indexOf('/');
  const address = slash === -1 ? value : value.slice(0, slash);
  const prefixText = slash === -1 ? null : value.slice(slash + 1);
  if (prefixText !== null && !/^\d{1,3}$/.test(prefixText)) throw invalid();
  if (ipaddr.IPv4.isValidFourPartDecimal(address)) {
    const prefix = prefixText === null ? 32 : Number(prefixText);
    if (prefix > 32) throw invalid();
    return `${ipaddr.IPv4.networkAddressFromCIDR(`${address}/${prefix}`).toString()}/${prefix}`;
  }
  if (!address.includes('%') && ipaddr.IPv6.isValid(address)) {
    const prefix = prefixText === null ? 128 : Number(prefixText);
    if (prefix > 128) throw invalid();
    const network = ipaddr.IPv6.networkAddressFromCIDR(`${address}/${prefix}`);
    // RFC 5952 section 5: IPv4-mapped addresses read best in mixed notation.
    const text = network.isIPv4MappedAddress() ? `::ffff:${network.toIPv4Address().toString()}` : network.toRFC5952String();
    return `${text}/${prefix}`;
  }
  throw invalid();
}

function scopesOf(requested: readonly string[]): OrgScope[] {
  if (requested.length === 0) throw new ValidationError('an API key needs at least one scope');
  for (const scope of requested) {
    if (!(ORG_SCOPES as readonly string[]).includes(scope)) {
      throw new ValidationError(`unknown scope "${scope}"; scopes are ${ORG_SCOPES.join(', ')}`);
    }
  }
  return ORG_SCOPES.filter((s) => requested.includes(s));
}

function nameOf(requested: string | null | undefined): string | null {
  if (requested === undefined || requested === null) return null;
  const name = requested.trim();
  if (name.length === 0) throw new ValidationError('a key name must not be empty');
  if ([...name].length > MAX_API_KEY_NAME_LENGTH) throw new ValidationError(`a key name has at most ${MAX_API_KEY_NAME_LENGTH} characters`);
  return name;
}

export const apiKeyDecider: Decider<ApiKeyCommand, ApiKeyEvent, ApiKeyState> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    switch (event.type) {
      case 'ApiKeyCreated': {
        const { keyId, orgId, userId, scopes, expiresAt, allowedIps } = event.data;
        return { status: 'active', keyId, orgId, userId, scopes, expiresAt, allowedIps };
      }
      case 'ApiKeyRevoked':
        return state.status === 'absent' ? state : { ...state, status: 'revoked' };
      default:
        // A type this build does not fold (written by newer code) leaves the state as it is.
        return state;
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'CreateApiKey': {
        const { keyId, orgId, userId, keyHash } = command.data;
        if (state.status !== 'absent') throw new ConflictError(`API key ${keyId} already exists`);
        // A raw key here would be appended to the log forever: accept only the hash's shape.
        if (!SHA256_HEX.test(keyHash)) throw new ValidationError('key hash must be SHA-256 hex');
        const scopes = scopesOf(command.data.scopes);
        let expiresAt: string | null = null;
        if (command.data.expiresAt !== null) {
          // An explicit zone is required: the use case decides what a zone-less input means.
          const expiry = parseIsoInstant(command.data.expiresAt);
          if (!expiry || expiry.dateOnly || !expiry.hasZone) {
            throw new ValidationError('expiry must be an ISO 8601 date and time with Z or an offset');
          }
          if (expiry.time <= Date.parse(command.data.now)) throw new ValidationError('expiry must be in the future');
          expiresAt = new Date(expiry.time).toISOString();
        }
        if (command.data.allowedIps.length > MAX_ALLOWED_IPS) {
          throw new ValidationError(`at most ${MAX_ALLOWED_IPS} allowed IP ranges`);
        }
        const allowedIps = [...new Set(command.data.allowedIps.map(normaliseCidr))];
        const name = nameOf(command.data.name);
        return [{ type: 'ApiKeyCreated', data: { keyId, orgId, userId, keyHash, scopes, expiresAt, allowedIps, name } }];
      }
      case 'RevokeApiKey': {
        const { keyId, orgId } = command.data;
        if (state.status === 'absent' || (orgId !== undefined && state.orgId !== orgId)) {
          throw new NotFoundError(`API key ${keyId} not found`);
        }
        if (state.status === 'revoked') return [];
        return [{ type: 'ApiKeyRevoked', data: { keyId: state.keyId, orgId: state.orgId } }];
      }
    }
  },
};
