// pass_list: one row per pass, for the pass listings (keyset pagination, newest first) and search.
import type { Knex } from 'knex';
import type { PassListRow } from '../shared/db/read-models.js';
import { READ_MODELS } from '../shared/db/read-models.js';
import { searchText, type Projection, type ProjectionEvent } from './projection.js';

/**
 * A row as the projection writes it: timestamps as the events' own ISO 8601 text, which
 * PostgreSQL reads as is, sparing a Date made and formatted again per pass in a rebuild.
 */
type WrittenPassListRow = Omit<PassListRow, TimestampColumn> & { [C in TimestampColumn]: Date | string };
type TimestampColumn = 'valid_from' | 'valid_until' | 'created_at';

export const passListProjection: Projection<WrittenPassListRow> = {
  name: READ_MODELS.passList,
  // 2: PassRegistered and PassCheckedOut move the status on; the batch index serves the pass page.
  version: 2,
  handles: ['PassCreated', 'PassRevoked', 'PassRegistered', 'PassCheckedIn', 'PassCheckedOut'],
  keyColumn: 'pass_id',
  opensGuestData: true,

  keyOf(event: ProjectionEvent) {
    switch (event.type) {
      case 'PassCreated':
      case 'PassRevoked':
      case 'PassRegistered':
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
        const guest = d.guest; // null once the guest's key is destroyed: names and contact stay empty
        return {
          pass_id: d.passId,
          public_id: d.publicId,
          org_id: d.orgId,
          facility_id: d.facilityId,
          created_by: d.createdBy,
          batch_id: d.batchId,
          stream_name: event.streamName,
          status: 'expected',
          first_name: guest?.firstName ?? null,
          last_name: guest?.lastName ?? null,
          email: guest?.email ?? null,
          phone: guest?.phone ?? null,
          arrival_date: d.arrivalDate,
          arrival_time: d.arrivalTime,
          valid_from: d.validFrom,
          valid_until: d.validUntil,
          qr_hash: d.qrHash,
          created_at: event.metadata.occurredAt,
          search_text: searchText([guest?.firstName, guest?.lastName, guest?.email, guest?.phone]),
        };
      }
      case 'PassRevoked':
        if (!row || row.status === 'cancelled') return undefined;
        return { ...row, status: 'cancelled' };
      case 'PassRegistered':
        if (!row || row.status !== 'expected') return undefined;
        return { ...row, status: 'registered' };
      case 'PassCheckedOut':
        if (!row || row.status !== 'checked_in') return undefined;
        return { ...row, status: 'checked_out' };
      case 'PassCheckedIn':
        // The door path checks in only an active pass; a late or repeated event changes nothing.
        if (!row || (row.status !== 'expected' && row.status !== 'registered')) return undefined;
        return { ...row, status: 'checked_in' };
      default:
        return undefined;
    }
  },

  async createTable(knex: Knex, table: string) {
    await knex.raw(
      `CREATE TABLE ?? (
        pass_id      bigint      PRIMARY KEY,
        public_id    text        NOT NULL,
        org_id       bigint      NOT NULL,
        facility_id  bigint      NOT NULL,
        created_by   bigint      NOT NULL,
        batch_id     text        NOT NULL,
        stream_name  text        NOT NULL,
        status       text        NOT NULL,
        first_name   text,
        last_name    text,
        email        text,
        phone        text,
        arrival_date text        NOT NULL,
        arrival_time text,
        valid_from   timestamptz NOT NULL,
        valid_until  timestamptz NOT NULL,
        qr_hash      text        NOT NULL,
        created_at   timestamptz NOT NULL,
        search_text  text        NOT NULL
      )`,
      [table],
    );
  },

  indexes: [
    { suffix: 'public_id_key', unique: true, on: '(public_id)' },
    // Keyset pagination, newest first with the id as tie-breaker: organization-wide and per creator.
    { suffix: 'org_created_idx', on: '(org_id, created_at DESC, pass_id DESC)' },
    { suffix: 'org_creator_created_idx', on: '(org_id, created_by, created_at DESC, pass_id DESC)' },
    // The passes of one batch, in creation order: the pass page.
    { suffix: 'batch_idx', on: '(batch_id, pass_id)' },
    // Substring search (ILIKE '%term%') on names, email and phone; pg_trgm comes from migration 003.
    { suffix: 'search_trgm_idx', on: 'USING gin (search_text gin_trgm_ops)' },
  ],
};
