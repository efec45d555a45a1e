// invite_allowance_usage: passes created per inviting user and UTC month, for the `usage` block.
// The allowance itself is enforced by the guest-invites stream's decider, never by this row.
import type { Knex } from 'knex';
import type { InviteAllowanceUsageRow } from '../shared/db/read-models.js';
import { READ_MODELS } from '../shared/db/read-models.js';
import type { Projection, ProjectionEvent } from './projection.js';

const GUEST_INVITES_STREAM = /^guest-invites-(\d+)-(\d{4}-\d{2})$/;

/** The month the decider counted the pass in: the stream's, else the month it was created. */
function monthOfPass(event: ProjectionEvent): string {
  const m = GUEST_INVITES_STREAM.exec(event.streamName);
  return m ? m[2]! : event.metadata.occurredAt.slice(0, 7);
}

export function usageKey(userId: number, month: string): string {
  return `${userId}:${month}`;
}

export const inviteAllowanceUsageProjection: Projection<InviteAllowanceUsageRow> = {
  name: READ_MODELS.inviteAllowanceUsage,
  version: 1,
  handles: ['PassCreated'],
  keyColumn: 'usage_key',
  hotRows: true,

  keyOf(event: ProjectionEvent) {
    return event.type === 'PassCreated' ? usageKey(event.data.createdBy, monthOfPass(event)) : null;
  },

  apply(row, event) {
    if (event.type !== 'PassCreated') return undefined;
    // A counter: the runner's row position makes a second delivery of the same event a no-op.
    if (row) return { ...row, used: Number(row.used) + 1 };
    const month = monthOfPass(event);
    return { usage_key: usageKey(event.data.createdBy, month), user_id: event.data.createdBy, month, used: 1 };
  },

  async createTable(knex: Knex, table: string) {
    await knex.raw(
      `CREATE TABLE ?? (
        usage_key text    PRIMARY KEY,
        user_id   bigint  NOT NULL,
        month     text    NOT NULL,
        used      integer NOT NULL
      )`,
      [table],
    );
  },
};
