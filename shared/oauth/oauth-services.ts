// What every OAuth endpoint and the sign-in pages are given: the issuer, the client registry, the
// signing keys and their public set, and the key-encryption key. Built once per process by the
// composition root (runtime/runtime.ts) or the test stack.
import { createPgPool } from '../db/pg-pool.js';
import type { Knex } from 'knex';
import type { JWTVerifyGetKey } from 'jose';
import type { ClientDirectory } from './client-decider.js';
import { PostgresClientDirectory } from './postgres-client-directory.js';
import { PostgresSigningKeyStore } from './postgres-signing-key-store.js';
import { SigningKeys } from './signing-keys.js';
import { MAX_SIGNED_TOKEN_LIFETIME_SECONDS, refreshingKeySet } from './tokens.js';

/** An upstream OpenID Provider users may sign in with (federated sign-in), from the environment. */
export interface FederationConfig {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string | null;
  /** Shown on the sign-in button. */
  readonly displayName: string;
  /** Link a first sign-in by email whatever `email_verified` says, absent or false included (FEDERATED_TRUST_EMAIL). */
  readonly trustUnverifiedEmail?: boolean;
}

export interface OAuthServices {
  /** The issuer identifier: the service's public base URL, no trailing slash. */
  readonly issuer: string;
  readonly clients: ClientDirectory;
  readonly signingKeys: SigningKeys;
  /** Resolves our own public keys (reloaded on an unknown kid): offline verification of our tokens. */
  readonly verificationKeys: JWTVerifyGetKey;
  /** Seals secrets at rest (signing keys) and keys cookies' HMACs. */
  readonly kek: Buffer;
  readonly federation: FederationConfig | null;
  close(): Promise<void>;
}

export interface OAuthServicesOptions {
  readonly issuer: string;
  readonly kek: Buffer;
  readonly federation?: FederationConfig | null;
}

export function createOAuthServices(db: Knex, databaseUrl: string, options: OAuthServicesOptions): OAuthServices {
  const pool = createPgPool(databaseUrl, 2);
  const signingKeys = new SigningKeys(new PostgresSigningKeyStore(pool), options.kek, {
    maxTokenLifetimeSeconds: MAX_SIGNED_TOKEN_LIFETIME_SECONDS,
  });
  return {
    issuer: options.issuer.replace(/\/+$/, ''),
    clients: new PostgresClientDirectory(db),
    signingKeys,
    verificationKeys: refreshingKeySet(() => signingKeys.jwks()),
    kek: options.kek,
    federation: options.federation ?? null,
    close: () => pool.end(),
  };
}
