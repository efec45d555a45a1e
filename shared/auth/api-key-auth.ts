// Organization API key authentication.
//
// A key is `svc_sk_<secret>`, sent as `Authorization: Bearer <key>` or `X-API-Key: <key>` (both
// at once only if they are the same key). It is looked up by its SHA-256 (hex) in the api_keys
// read model, and the stored hash is compared in constant time. Unknown, malformed, revoked,
// expired and IP-restricted keys, and keys whose admin no longer holds the `admin` role, are
// indistinguishable to the caller: all are the same 401 `invalid_token`; the reason is logged
// for operators (with the key id, never the key). A key works again if its admin gets the role back.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Knex } from 'knex';
import { InvalidTokenError } from '../errors.js';
import { READ_MODELS, type ApiKeyRow } from '../db/read-models.js';
import { clientIp } from '../http/client-ip.js';
import type { HttpContext, HttpMiddleware } from '../http/http-state.js';
import { ipAllowed } from './ip-allowlist.js';
import { batchPerTurn } from '../db/turn-batch.js';
import type { ReadModelChanges } from '../read-model-changes.js';
import type { ApiKeyPrincipal } from './principal.js';
import { lastUseRecorder } from './api-key-last-use.js';

export const API_KEY_PREFIX = 'svc_sk_';
/** Prefix and a base64url secret (43 characters for 256 bits); anything else is never looked up. */
const API_KEY_FORMAT = new RegExp(`^${API_KEY_PREFIX}[A-Za-z0-9_-]{20,200}$`);

/** How a key is stored and looked up: SHA-256 of the whole key, hex. */
export function hashApiKey(apiKey: string): string {
  return createHash('sha256').update(apiKey, 'utf8').digest('hex');
}

type Rejection = 'missing' | 'malformed' | 'conflicting_headers' | 'unknown' | 'revoked' | 'expired' | 'ip_not_allowed' | 'admin_role_removed';

class ApiKeyRejected extends InvalidTokenError {
  constructor(readonly reason: Rejection, readonly keyId: string | null = null) {
    super('the API key is missing or invalid');
  }
}

/** The presented key, from either header; throws when absent, malformed or ambiguous. */
export function presentedApiKey(ctx: Pick<HttpContext, 'get'>): string {
  const authorization = ctx.get('authorization');
  const headerKey = ctx.get('x-api-key').trim();
  let bearer = '';
  if (authorization) {
    const match = /^Bearer +(\S+) *$/i.exec(authorization);
    if (!match) throw new ApiKeyRejected('malformed');
    bearer = match[1]!;
  }
  if (bearer && headerKey && bearer !== headerKey) throw new ApiKeyRejected('conflicting_headers');
  const key = bearer || headerKey;
  if (!key) throw new ApiKeyRejected('missing');
  if (!API_KEY_FORMAT.test(key)) throw new ApiKeyRejected('malformed');
  return key;
}

export interface ApiKeyAuthOptions {
  readonly db: Knex;
  readonly trustProxy: boolean;
  readonly now?: () => Date;
  /** When given, found keys are cached and dropped whenever the api_keys read model changes. */
  readonly changes?: ReadModelChanges;
}

/** Sets `ctx.state.principal` to an ApiKeyPrincipal, or throws InvalidTokenError. */
export function apiKeyAuth(options: ApiKeyAuthOptions): HttpMiddleware {
  const now = options.now ?? (() => new Date());
  const lookUp = options.changes ? cachedLookup(apiKeyLookup(options.db), options.changes) : apiKeyLookup(options.db);
  const lastUse = lastUseRecorder(options.db);
  return async function authenticateApiKey(ctx, next) {
    try {
      const at = now();
      const principal = await authenticate(ctx, lookUp, options.trustProxy, at);
      ctx.state.principal = principal;
      // Throttled and not awaited: never delays or fails the request.
      lastUse.record(principal.keyId, at, ctx.state.log);
    } catch (error) {
      if (error instanceof ApiKeyRejected) {
        ctx.state.log.info({ reason: error.reason, keyId: error.keyId }, 'api key rejected');
      }
      throw error;
    }
    await next();
  };
}

type KeyColumns = 'key_id' | 'org_id' | 'user_id' | 'key_hash' | 'scopes' | 'expires_at' | 'allowed_ips' | 'revoked';
/** A key's row, and whether the admin it acts for still holds the `admin` role. */
type FoundKey = Pick<ApiKeyRow, KeyColumns> & { admin: boolean };
type KeyLookup = (hash: string) => Promise<FoundKey | undefined>;

/** Finds keys by hash; the lookups of one event-loop turn share one query. */
function apiKeyLookup(db: Knex): KeyLookup {
  return batchPerTurn(async (hashes: string[]) => {
    const rows: FoundKey[] = await db({ k: READ_MODELS.apiKeys })
      .leftJoin({ u: READ_MODELS.users }, 'u.user_id', 'k.user_id')
      .select('k.key_id', 'k.org_id', 'k.user_id', 'k.key_hash', 'k.scopes', 'k.expires_at', 'k.allowed_ips', 'k.revoked')
      .select(db.raw(`coalesce('admin' = any(u.roles) AND u.org_id = k.org_id, false) AS admin`))
      .whereRaw('k.key_hash = any(?::text[])', [[...new Set(hashes)]]);
    const byHash = new Map(rows.map((row) => [row.key_hash, row]));
    return hashes.map((hash) => byHash.get(hash));
  });
}

/** Cached keys, at most; the oldest go first. */
const MAX_CACHED_KEYS = 10_000;

/**
 * Found keys, cached until the api_keys or users read model changes (a key created, revoked or
 * expired by an operator; an admin's role granted or revoked): then all of them are dropped,
 * since a change names no key. Unknown keys are
 * not cached, so guessing cannot fill the cache. Expiry and IP allowlist are checked on every
 * request from the cached row. A lookup that raced a change is not cached (generation check), and
 * nothing is cached while changes may go unheard.
 */
function cachedLookup(lookUp: KeyLookup, changes: ReadModelChanges): KeyLookup {
  const cache = new Map<string, FoundKey>();
  let generation = 0;
  changes.onRowsChanged((projections) => {
    if (projections !== null && !projections.includes(READ_MODELS.apiKeys) && !projections.includes(READ_MODELS.users)) return;
    generation++;
    cache.clear();
  });
  return async (hash) => {
    const hit = cache.get(hash);
    if (hit) return hit;
    const startedAt = generation;
    const row = await lookUp(hash);
    if (row && generation === startedAt && changes.hearsEveryChange()) {
      if (cache.size >= MAX_CACHED_KEYS) cache.delete(cache.keys().next().value!);
      cache.set(hash, row);
    }
    return row;
  };
}

async function authenticate(ctx: HttpContext, lookUp: KeyLookup, trustProxy: boolean, now: Date): Promise<ApiKeyPrincipal> {
  const hash = hashApiKey(presentedApiKey(ctx));
  const row = await lookUp(hash);
  if (!row || row.key_hash.length !== hash.length || !timingSafeEqual(Buffer.from(row.key_hash, 'utf8'), Buffer.from(hash, 'utf8'))) {
    throw new ApiKeyRejected('unknown');
  }
  if (row.revoked) throw new ApiKeyRejected('revoked', row.key_id);
  if (!row.admin) throw new ApiKeyRejected('admin_role_removed', row.key_id);
  if (row.expires_at !== null && new Date(row.expires_at).getTime() <= now.getTime()) {
    throw new ApiKeyRejected('expired', row.key_id);
  }
  if (row.allowed_ips.length > 0 && !ipAllowed(clientIp(ctx, trustProxy), row.allowed_ips)) {
    throw new ApiKeyRejected('ip_not_allowed', row.key_id);
  }
  return { kind: 'apiKey', keyId: row.key_id, orgId: row.org_id, userId: row.user_id, scopes: row.scopes };
}
