// The query service's view of a token's standing, from the read models only: revoked families
// (revoked_token_families), the client's organization (oauth_clients) and the user's roles
// (users). A revocation reaches these reads once its projection has applied it: the lag
// bench/token-revocation-lag.ts measures.
import type { Knex } from 'knex';
import { READ_MODELS, type OAuthClientRow, type RevokedTokenFamilyRow, type UserRow } from '../../shared/db/read-models.js';
import type { TokenAccount, TokenAccounts, TokenRevocations } from '../../shared/auth/access-token-auth.js';

export function readModelRevocations(db: Knex): TokenRevocations {
  return {
    async isRevoked(familyId) {
      const row = await db<RevokedTokenFamilyRow>(READ_MODELS.revokedTokenFamilies).where({ family_id: familyId }).first('family_id');
      return row !== undefined;
    },
  };
}

export function readModelAccounts(db: Knex): TokenAccounts {
  return {
    async clientOrgId(clientId) {
      const row = await db<OAuthClientRow>(READ_MODELS.oauthClients).where({ client_id: clientId, deleted: false }).first('org_id');
      return row ? Number(row.org_id) : null;
    },
    async user(userId): Promise<TokenAccount | null> {
      const row = await db<UserRow>(READ_MODELS.users).where({ user_id: userId }).first('org_id', 'roles');
      return row ? { orgId: Number(row.org_id), roles: row.roles } : null;
    },
  };
}
