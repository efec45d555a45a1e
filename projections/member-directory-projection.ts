// member_directory: one row per member of an organization's directory (issue 16), for the
// organization member endpoints (query-service/members). Names are opened by the runner
// (guest-data.ts) and stored in the clear for listing and trigram search; the contact (email,
// phone) is stored SEALED exactly as in the event, with the keyed hashes that whole-value search
// uses: the read model holds no contact data in plaintext, and the query service opens a contact
// only for a credential with the contact scope.
//
// Erasure: MemberErased nulls the contact and both hashes; with `includeName` the names become ''
// (the columns stay NOT NULL: an erased member still lists, nameless). The keys are destroyed
// before the event is recorded, so a rebuild opens nothing either (name null -> '', contact null).
//
// member_counts: active and inactive members per organization, so that the listing's `total` is
// one row rather than a count(*) over the directory. A counter: it trusts the member decider to
// record Deactivated only for an active member and Reactivated only for an inactive one.
import type { Knex } from 'knex';
import { READ_MODELS, type MemberCountRow, type MemberDirectoryRow } from '../shared/db/read-models.js';
import type { Projection, ProjectionEvent } from './projection.js';

/** As the projection writes it: created_at as the event's own ISO 8601 text. */
type WrittenMemberRow = Omit<MemberDirectoryRow, 'created_at'> & { created_at: Date | string };

export const memberDirectoryProjection: Projection<WrittenMemberRow> = {
  name: READ_MODELS.memberDirectory,
  version: 1,
  handles: ['MemberJoined', 'MemberProfileChanged', 'MemberDeactivated', 'MemberReactivated', 'MemberErased'],
  keyColumn: 'member_id',
  opensGuestData: true,

  keyOf(event: ProjectionEvent) {
    switch (event.type) {
      case 'MemberJoined':
      case 'MemberProfileChanged':
      case 'MemberDeactivated':
      case 'MemberReactivated':
      case 'MemberErased':
        return event.data.memberId;
      default:
        return null;
    }
  },

  apply(row, event) {
    switch (event.type) {
      case 'MemberJoined': {
        if (row) return undefined;
        const d = event.data;
        return {
          member_id: d.memberId,
          org_id: d.orgId,
          user_id: d.userId,
          ...profileColumns(d),
          status: 'active',
          created_at: event.metadata.occurredAt,
        };
      }
      case 'MemberProfileChanged':
        // The whole profile as it now is; a change of an unknown member (never joined) is ignored.
        if (!row) return undefined;
        return { ...row, ...profileColumns(event.data) };
      case 'MemberDeactivated':
        if (!row || row.status === 'inactive') return undefined;
        return { ...row, status: 'inactive' };
      case 'MemberReactivated':
        if (!row || row.status === 'active') return undefined;
        return { ...row, status: 'active' };
      case 'MemberErased': {
        if (!row) return undefined;
        const names = event.data.includeName ? { first_name: '', last_name: '', name: '' } : {};
        return { ...row, ...names, contact: null, email_hash: null, phone_hash: null };
      }
      default:
        return undefined;
    }
  },

  async createTable(knex: Knex, table: string) {
    await knex.raw(
      `CREATE TABLE ?? (
        member_id   text        PRIMARY KEY,
        org_id      bigint      NOT NULL,
        user_id     bigint,
        first_name  text        NOT NULL,
        last_name   text        NOT NULL,
        name        text        NOT NULL,
        job_title   text,
        department  text,
        external_id text,
        status      text        NOT NULL,
        created_at  timestamptz NOT NULL,
        contact     jsonb,
        email_hash  text,
        phone_hash  text
      )`,
      [table],
    );
  },

  indexes: [
    // Keyset pagination, newest first with the id as tie-breaker: by status (the default list) and all.
    { suffix: 'org_status_created_idx', on: '(org_id, status, created_at DESC, member_id DESC)' },
    { suffix: 'org_created_idx', on: '(org_id, created_at DESC, member_id DESC)' },
    // Case-insensitive substring search on the name (lower(name) LIKE '%term%'); pg_trgm from migration 003.
    { suffix: 'name_trgm_idx', on: 'USING gin (lower(name) gin_trgm_ops)' },
    // Whole-value contact search by keyed hash, and import matching by the HR system's id.
    { suffix: 'org_email_hash_idx', on: '(org_id, email_hash)' },
    { suffix: 'org_phone_hash_idx', on: '(org_id, phone_hash)' },
    { suffix: 'org_external_id_idx', on: '(org_id, external_id)' },
  ],
};

type ProfileEvent = Extract<ProjectionEvent, { type: 'MemberJoined' | 'MemberProfileChanged' }>;

function profileColumns(d: ProfileEvent['data']) {
  // null once the name key is destroyed (a rebuild after an erasure with includeName).
  const firstName = d.name?.firstName ?? '';
  const lastName = d.name?.lastName ?? '';
  return {
    first_name: firstName,
    last_name: lastName,
    name: [firstName, lastName].filter((part) => part !== '').join(' '),
    job_title: d.jobTitle,
    department: d.department,
    external_id: d.externalId,
    contact: d.contact ? { ...d.contact.sealed } : null,
    email_hash: d.contact?.emailHash ?? null,
    phone_hash: d.contact?.phoneHash ?? null,
  };
}

export const memberCountsProjection: Projection<MemberCountRow> = {
  name: READ_MODELS.memberCounts,
  version: 1,
  handles: ['MemberJoined', 'MemberDeactivated', 'MemberReactivated'],
  keyColumn: 'org_id',
  hotRows: true,

  keyOf(event: ProjectionEvent) {
    switch (event.type) {
      case 'MemberJoined':
      case 'MemberDeactivated':
      case 'MemberReactivated':
        return event.data.orgId;
      default:
        return null;
    }
  },

  apply(row, event) {
    const counts = { org_id: row?.org_id ?? (event.data as { orgId: number }).orgId, active: Number(row?.active ?? 0), inactive: Number(row?.inactive ?? 0) };
    switch (event.type) {
      case 'MemberJoined':
        return { ...row, ...counts, active: counts.active + 1 };
      case 'MemberDeactivated':
        return { ...row, ...counts, active: Math.max(0, counts.active - 1), inactive: counts.inactive + 1 };
      case 'MemberReactivated':
        return { ...row, ...counts, active: counts.active + 1, inactive: Math.max(0, counts.inactive - 1) };
      default:
        return undefined;
    }
  },

  async createTable(knex: Knex, table: string) {
    await knex.raw(
      `CREATE TABLE ?? (
        org_id   bigint PRIMARY KEY,
        active   bigint NOT NULL,
        inactive bigint NOT NULL
      )`,
      [table],
    );
  },
};
