// organizations: one row per organization, with the pass count the pass list reports as `total`.
import type { Knex } from 'knex';
import type { OrganizationRow } from '../shared/db/read-models.js';
import { READ_MODELS } from '../shared/db/read-models.js';
import type { Projection, ProjectionEvent } from './projection.js';

export const organizationsProjection: Projection<OrganizationRow> = {
  name: READ_MODELS.organizations,
  version: 1,
  handles: ['OrganizationCreated', 'OrganizationInviteAllowanceChanged', 'PassCreated'],
  keyColumn: 'org_id',
  hotRows: true,

  keyOf(event: ProjectionEvent) {
    switch (event.type) {
      case 'OrganizationCreated':
      case 'OrganizationInviteAllowanceChanged':
      case 'PassCreated':
        return event.data.orgId;
      default:
        return null;
    }
  },

  apply(row, event) {
    switch (event.type) {
      case 'OrganizationCreated':
        if (row) return undefined;
        return {
          org_id: event.data.orgId,
          name: event.data.name,
          invite_allowance: event.data.inviteAllowance,
          pass_count: 0,
          created_at: new Date(event.metadata.occurredAt),
        };
      case 'OrganizationInviteAllowanceChanged':
        return row ? { ...row, invite_allowance: event.data.inviteAllowance } : undefined;
      case 'PassCreated':
        // A counter: applying the same PassCreated twice is prevented by the row's position, not here.
        // Revoked passes stay in the list (as cancelled), so nothing decrements it.
        return row ? { ...row, pass_count: Number(row.pass_count) + 1 } : undefined;
      default:
        return undefined;
    }
  },

  async createTable(knex: Knex, table: string) {
    await knex.raw(
      `CREATE TABLE ?? (
        org_id           bigint      PRIMARY KEY,
        name             text        NOT NULL,
        invite_allowance integer     NOT NULL,
        pass_count       bigint      NOT NULL,
        created_at       timestamptz NOT NULL
      )`,
      [table],
    );
  },
};
