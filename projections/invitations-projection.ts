// invitations: pending invitations, listed to the invited user by user id or email. An answered
// (accepted, declined) or cancelled invitation leaves it.
import type { Knex } from 'knex';
import type { InvitationRow } from '../shared/db/read-models.js';
import { READ_MODELS } from '../shared/db/read-models.js';
import type { Projection } from './projection.js';

export const invitationsProjection: Projection<InvitationRow> = {
  name: READ_MODELS.invitations,
  version: 1,
  handles: ['InvitationCreated', 'InvitationAccepted', 'InvitationDeclined', 'InvitationCancelled'],
  keyColumn: 'invite_id',

  keyOf(event) {
    switch (event.type) {
      case 'InvitationCreated':
      case 'InvitationAccepted':
      case 'InvitationDeclined':
      case 'InvitationCancelled':
        return event.data.inviteId;
      default:
        return null;
    }
  },

  apply(row, event) {
    if (event.type === 'InvitationAccepted' || event.type === 'InvitationDeclined' || event.type === 'InvitationCancelled') return row ? null : undefined;
    if (event.type !== 'InvitationCreated' || row) return undefined;
    const d = event.data;
    return {
      invite_id: d.inviteId,
      org_id: d.orgId,
      email: d.email.toLowerCase(),
      user_id: d.userId,
      role: d.role,
      status: 'pending',
      created_at: new Date(event.metadata.occurredAt),
    };
  },

  async createTable(knex: Knex, table: string) {
    await knex.raw(
      `CREATE TABLE ?? (
        invite_id  bigint      PRIMARY KEY,
        org_id     bigint      NOT NULL,
        email      text        NOT NULL,
        user_id    bigint,
        role       text,
        status     text        NOT NULL,
        created_at timestamptz NOT NULL
      )`,
      [table],
    );
  },

  indexes: [
    { suffix: 'email_idx', on: '(email)' },
    { suffix: 'user_idx', on: '(user_id)' },
  ],
};
