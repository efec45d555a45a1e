// users: one row per user with its roles, sign-in hash and invite allowance override.
import type { Knex } from 'knex';
import type { UserRow } from '../shared/db/read-models.js';
import { READ_MODELS } from '../shared/db/read-models.js';
import type { Projection, ProjectionEvent } from './projection.js';

export const usersProjection: Projection<UserRow> = {
  name: READ_MODELS.users,
  version: 1,
  handles: ['UserAdded', 'RoleGranted', 'RoleRevoked', 'UserInviteAllowanceChanged'],
  keyColumn: 'user_id',

  keyOf(event: ProjectionEvent) {
    switch (event.type) {
      case 'UserAdded':
      case 'RoleGranted':
      case 'RoleRevoked':
      case 'UserInviteAllowanceChanged':
        return event.data.userId;
      default:
        return null;
    }
  },

  apply(row, event) {
    switch (event.type) {
      case 'UserAdded': {
        if (row) return undefined;
        const d = event.data;
        return {
          user_id: d.userId,
          org_id: d.orgId,
          email: d.email,
          first_name: d.firstName,
          last_name: d.lastName,
          password_hash: d.passwordHash,
          roles: [],
          invite_allowance: d.inviteAllowance,
          created_at: new Date(event.metadata.occurredAt),
        };
      }
      case 'RoleGranted':
        if (!row || row.roles.includes(event.data.role)) return undefined;
        return { ...row, roles: [...row.roles, event.data.role] };
      case 'RoleRevoked':
        if (!row || !row.roles.includes(event.data.role)) return undefined;
        return { ...row, roles: row.roles.filter((r) => r !== event.data.role) };
      case 'UserInviteAllowanceChanged':
        return row ? { ...row, invite_allowance: event.data.inviteAllowance } : undefined;
      default:
        return undefined;
    }
  },

  async createTable(knex: Knex, table: string) {
    await knex.raw(
      `CREATE TABLE ?? (
        user_id          bigint      PRIMARY KEY,
        org_id           bigint      NOT NULL,
        email            text        NOT NULL,
        first_name       text        NOT NULL,
        last_name        text        NOT NULL,
        password_hash    text,
        roles            text[]      NOT NULL,
        invite_allowance integer,
        created_at       timestamptz NOT NULL
      )`,
      [table],
    );
  },

  // Sign-in looks users up by email (case-insensitively); the member directory lists by organization.
  indexes: [
    { suffix: 'email_idx', on: '(lower(email))' },
    { suffix: 'org_created_idx', on: '(org_id, created_at DESC, user_id DESC)' },
  ],
};
