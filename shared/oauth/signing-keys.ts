// The RS256 keys that sign access tokens and id_tokens, and the JWKS that publishes them.
//
// Keys live in a table (oauth_signing_keys, behind the SigningKeyStore port), not in events: the
// event log is immutable, kept forever and copied to every consumer and backup, while a private
// key must be destroyable once every token it signed has expired. Key lifecycle is operational
// state that no projection or auditor needs to replay. Private halves are sealed with AES-256-GCM
// under the key-encryption key (key-encryption-key.ts), bound to their kid.
//
// Rotation: the new key signs from the moment it is stored; the previous key stays published
// until `retireAfter` = rotation time + the longest lifetime of a token it may have signed + the
// time another process may keep signing with its cached copy (cacheSeconds). Retired keys are
// deleted, destroying their private material.
//
// RSA 2048: the usual size for RS256 (NIST-acceptable through 2030); 3072 would triple the cost of
// every signature, and signing is the floor of the token endpoint's throughput.
import type { webcrypto } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, exportPKCS8, generateKeyPair, importPKCS8 } from 'jose';
import { open, seal, type Sealed } from './key-encryption-key.js';

export const SIGNING_ALGORITHM = 'RS256';
export const RSA_MODULUS_LENGTH = 2048;
/** How long a process signs with its cached current key before looking for a rotation. */
export const DEFAULT_KEY_CACHE_SECONDS = 60;

/** One entry of the published key set (spec: `{kty, use, alg, kid, n, e}`). */
export interface PublicSigningJwk {
  readonly kty: 'RSA';
  readonly use: 'sig';
  readonly alg: typeof SIGNING_ALGORITHM;
  readonly kid: string;
  readonly n: string;
  readonly e: string;
}

export interface JsonWebKeySet {
  readonly keys: readonly PublicSigningJwk[];
}

export interface SigningKeyRecord {
  readonly kid: string;
  readonly publicJwk: PublicSigningJwk;
  /** PKCS#8 PEM of the private key, sealed under the KEK with the kid as context. */
  readonly privateKey: Sealed;
  readonly createdAt: Date;
  /** Null for the current signing key. */
  readonly rotatedAt: Date | null;
  /** Null for the current key; afterwards the instant it leaves the key set. */
  readonly retireAfter: Date | null;
}

/** A key ready to sign. */
export interface ActiveSigningKey {
  readonly kid: string;
  readonly privateKey: webcrypto.CryptoKey;
}

/** Port. Adapters: PostgresSigningKeyStore (postgres-signing-key-store.ts), InMemorySigningKeyStore. */
export interface SigningKeyStore {
  /** The key that signs now, or null before the first one exists. */
  current(): Promise<SigningKeyRecord | null>;
  /** Keys in the key set at `now`: the current one first, then rotated ones not yet retired, newest rotation first. */
  published(now: Date): Promise<SigningKeyRecord[]>;
  /**
   * Stores `record` as the current key unless one exists already (two processes starting at once),
   * and returns whichever is current afterwards.
   */
  insertFirst(record: SigningKeyRecord): Promise<SigningKeyRecord>;
  /**
   * In one transaction: `previousKid` (which must still be current) gets rotatedAt/retireAfter and
   * `next` becomes current. Throws SigningKeyRotationConflict when `previousKid` is no longer current.
   */
  rotate(previousKid: string, next: SigningKeyRecord, rotatedAt: Date, retireAfter: Date): Promise<void>;
  /** Deletes keys retired at or before `now` (no longer published), destroying their private halves; returns how many. */
  deleteRetired(now: Date): Promise<number>;
}

export class SigningKeyRotationConflict extends Error {
  override readonly name = 'SigningKeyRotationConflict';
  constructor(readonly previousKid: string) {
    super(`signing key ${previousKid} is no longer the current key: another rotation happened first`);
  }
}

/** A fresh key pair, its private half sealed under `kek`. */
export async function generateSigningKey(kek: Uint8Array, now: Date): Promise<{ record: SigningKeyRecord; key: ActiveSigningKey }> {
  const pair = await generateKeyPair(SIGNING_ALGORITHM, { modulusLength: RSA_MODULUS_LENGTH, extractable: true });
  const jwk = await exportJWK(pair.publicKey);
  if (jwk.kty !== 'RSA' || typeof jwk.n !== 'string' || typeof jwk.e !== 'string') throw new Error('unexpected RSA JWK');
  // RFC 7638 thumbprint: the kid is derived from the key itself, so it is unique and verifiable.
  const kid = await calculateJwkThumbprint({ kty: 'RSA', n: jwk.n, e: jwk.e }, 'sha256');
  const pem = await exportPKCS8(pair.privateKey);
  const record: SigningKeyRecord = {
    kid,
    publicJwk: { kty: 'RSA', use: 'sig', alg: SIGNING_ALGORITHM, kid, n: jwk.n, e: jwk.e },
    privateKey: seal(Buffer.from(pem, 'utf8'), kek, kid),
    createdAt: now,
    rotatedAt: null,
    retireAfter: null,
  };
  // Re-import as non-extractable: the signing key in memory can never be exported again.
  return { record, key: { kid, privateKey: await importPKCS8(pem, SIGNING_ALGORITHM) } };
}

/** Opens a stored key for signing; throws KeyEncryptionKeyError for a wrong KEK or tampering. */
export async function unsealSigningKey(record: SigningKeyRecord, kek: Uint8Array): Promise<ActiveSigningKey> {
  const pem = open(record.privateKey, kek, record.kid).toString('utf8');
  return { kid: record.kid, privateKey: await importPKCS8(pem, SIGNING_ALGORITHM) };
}

export function toJwks(records: readonly SigningKeyRecord[]): JsonWebKeySet {
  return { keys: records.map((r) => ({ ...r.publicJwk })) };
}

/** The public key set from the store alone: what a verifier (query service) needs, without the KEK. */
export async function publishedJwks(store: SigningKeyStore, now = new Date()): Promise<JsonWebKeySet> {
  return toJwks(await store.published(now));
}

export interface SigningKeysOptions {
  /** The longest lifetime of any token signed (access token or id_token), in seconds. */
  readonly maxTokenLifetimeSeconds: number;
  readonly cacheSeconds?: number;
}

/**
 * The signing side: ensures a key exists on first start, hands out the current key (decrypted
 * once, then cached for cacheSeconds so a rotation by another process is picked up), rotates.
 */
export class SigningKeys {
  private cached: { key: ActiveSigningKey; until: number } | null = null;
  private loading: Promise<ActiveSigningKey> | null = null;
  private readonly cacheSeconds: number;

  constructor(
    private readonly store: SigningKeyStore,
    private readonly kek: Uint8Array,
    private readonly options: SigningKeysOptions,
  ) {
    this.cacheSeconds = options.cacheSeconds ?? DEFAULT_KEY_CACHE_SECONDS;
  }

  /** The key to sign with now; generates and stores the first key when there is none. */
  async current(now = new Date()): Promise<ActiveSigningKey> {
    if (this.cached && now.getTime() < this.cached.until) return this.cached.key;
    this.loading ??= this.load(now).finally(() => {
      this.loading = null;
    });
    return this.loading;
  }

  /** Makes a new key current; the previous one stays published until every token it signed has expired. */
  async rotate(now = new Date()): Promise<{ kid: string; previousKid: string; retireAfter: Date }> {
    const previous = (await this.store.current()) ?? (await this.ensureFirst(now)).record;
    const { record, key } = await generateSigningKey(this.kek, now);
    const retireAfter = new Date(now.getTime() + (this.options.maxTokenLifetimeSeconds + this.cacheSeconds) * 1000);
    await this.store.rotate(previous.kid, record, now, retireAfter);
    await this.store.deleteRetired(now);
    this.cached = { key, until: now.getTime() + this.cacheSeconds * 1000 };
    return { kid: record.kid, previousKid: previous.kid, retireAfter };
  }

  async jwks(now = new Date()): Promise<JsonWebKeySet> {
    return publishedJwks(this.store, now);
  }

  private async load(now: Date): Promise<ActiveSigningKey> {
    const stored = await this.store.current();
    const key = stored ? await unsealSigningKey(stored, this.kek) : (await this.ensureFirst(now)).key;
    this.cached = { key, until: now.getTime() + this.cacheSeconds * 1000 };
    return key;
  }

  private async ensureFirst(now: Date): Promise<{ record: SigningKeyRecord; key: ActiveSigningKey }> {
    const generated = await generateSigningKey(this.kek, now);
    const current = await this.store.insertFirst(generated.record);
    if (current.kid === generated.record.kid) return generated;
    // Another process stored its first key at the same moment: use that one.
    return { record: current, key: await unsealSigningKey(current, this.kek) };
  }
}
