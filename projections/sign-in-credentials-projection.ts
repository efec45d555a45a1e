// sign_in_credentials: which user a passkey or an upstream (federated) account signs in, so the
// sign-in page can find the user from what the browser or the upstream provider presents.
// Keyed by kind and credential: `passkey:{credentialId}` or `federated:{issuer} {subject}`.
import type { Knex } from 'knex';
import type { SignInCredentialRow } from '../shared/db/read-models.js';
import { READ_MODELS } from '../shared/db/read-models.js';
import type { Projection } from './projection.js';

export function passkeyCredentialKey(credentialId: string): string {
  return `passkey:${credentialId}`;
}

export function federatedCredentialKey(issuer: string, subject: string): string {
  return `federated:${issuer} ${subject}`;
}

export const signInCredentialsProjection: Projection<SignInCredentialRow> = {
  name: READ_MODELS.signInCredentials,
  version: 1,
  handles: ['PasskeyRegistered', 'PasskeyRemoved', 'FederatedIdentityLinked'],
  keyColumn: 'credential_key',

  keyOf(event) {
    if (event.type === 'PasskeyRegistered' || event.type === 'PasskeyRemoved') return passkeyCredentialKey(event.data.credentialId);
    if (event.type === 'FederatedIdentityLinked') return federatedCredentialKey(event.data.issuer, event.data.subject);
    return null;
  },

  apply(row, event) {
    // Only its owner's: another user may have registered the same credential id (see register-passkey.ts).
    if (event.type === 'PasskeyRemoved') return row && Number(row.user_id) === event.data.userId ? null : undefined;
    if (row) return undefined;
    const created_at = new Date(event.metadata.occurredAt);
    if (event.type === 'PasskeyRegistered') {
      const key = passkeyCredentialKey(event.data.credentialId);
      return { credential_key: key, kind: 'passkey', user_id: event.data.userId, created_at };
    }
    if (event.type === 'FederatedIdentityLinked') {
      const key = federatedCredentialKey(event.data.issuer, event.data.subject);
      return { credential_key: key, kind: 'federated', user_id: event.data.userId, created_at };
    }
    return undefined;
  },

  async createTable(knex: Knex, table: string) {
    await knex.raw(
      `CREATE TABLE ?? (
        credential_key text        PRIMARY KEY,
        kind           text        NOT NULL,
        user_id        bigint      NOT NULL,
        created_at     timestamptz NOT NULL
      )`,
      [table],
    );
  },
};
