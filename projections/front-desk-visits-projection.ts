// front_desk_visits: one row per pass, for the front desk (/visitors): who is expected at a
// facility on a day, who is on site (checked in, not out) and who left, with the times the doors
// saw. Its own read model rather than columns on pass_list: the front desk reads by (facility,
// arrival day), never by creator or search, and a rebuild of it does not touch the listings.
import type { Knex } from 'knex';
import { READ_MODELS, type FrontDeskVisitRow } from '../shared/db/read-models.js';
import type { Projection, ProjectionEvent } from './projection.js';

type WrittenVisitRow = Omit<FrontDeskVisitRow, 'checked_in_at' | 'checked_out_at'> & {
  checked_in_at: Date | string | null;
  checked_out_at: Date | string | null;
};

export const frontDeskVisitsProjection: Projection<WrittenVisitRow> = {
  name: READ_MODELS.frontDeskVisits,
  version: 1,
  handles: ['PassCreated', 'PassRevoked', 'PassCheckedIn', 'PassCheckedOut'],
  keyColumn: 'pass_id',
  opensGuestData: true,

  keyOf(event: ProjectionEvent) {
    switch (event.type) {
      case 'PassCreated':
      case 'PassRevoked':
      case 'PassCheckedIn':
      case 'PassCheckedOut':
        return event.data.passId;
      default:
        return null;
    }
  },

  apply(row, event) {
    switch (event.type) {
      case 'PassCreated': {
        if (row) return undefined;
        const d = event.data;
        return {
          pass_id: d.passId,
          public_id: d.publicId,
          org_id: d.orgId,
          facility_id: d.facilityId,
          created_by: d.createdBy,
          arrival_date: d.arrivalDate,
          arrival_time: d.arrivalTime,
          // Null once the guest's key is destroyed: the desk then shows no name.
          first_name: d.guest?.firstName ?? null,
          last_name: d.guest?.lastName ?? null,
          cancelled: false,
          checked_in_at: null,
          checked_out_at: null,
        };
      }
      case 'PassRevoked':
        return row && !row.cancelled ? { ...row, cancelled: true } : undefined;
      case 'PassCheckedIn':
        return row && row.checked_in_at === null ? { ...row, checked_in_at: event.data.checkedInAt } : undefined;
      case 'PassCheckedOut':
        return row && row.checked_out_at === null ? { ...row, checked_out_at: event.data.checkedOutAt } : undefined;
      default:
        return undefined;
    }
  },

  async createTable(knex: Knex, table: string) {
    await knex.raw(
      `CREATE TABLE ?? (
        pass_id        bigint      PRIMARY KEY,
        public_id      text        NOT NULL,
        org_id         bigint      NOT NULL,
        facility_id    bigint      NOT NULL,
        created_by     bigint      NOT NULL,
        arrival_date   text        NOT NULL,
        arrival_time   text,
        first_name     text,
        last_name      text,
        cancelled      boolean     NOT NULL,
        checked_in_at  timestamptz,
        checked_out_at timestamptz
      )`,
      [table],
    );
  },

  indexes: [
    // The desk's one query: a facility's guests of one day, in arrival order.
    { suffix: 'facility_day_idx', on: '(org_id, facility_id, arrival_date, arrival_time, pass_id)' },
    // Who is on site now, whatever day they were expected (the evacuation list).
    { suffix: 'on_site_idx', on: '(org_id, facility_id, checked_in_at) WHERE checked_in_at IS NOT NULL AND checked_out_at IS NULL' },
  ],
};
