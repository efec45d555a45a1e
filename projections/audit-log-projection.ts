// audit_log: one row per event that concerns an organization (its data names an orgId), for the
// admins' audit page (/settings/audit): when, who (the metadata's actor), what (the event type and
// its kind) and on what (the subject's kind and id). Only ids are kept, never names, addresses or
// guest details: the page looks people up in the read models at read time, so an erased member
// or guest leaves nothing here, and a rebuild writes the same rows. Door scans
// (DoorAccessRecorded) are left out: every scan of a door would bury the changes people made;
// the check-ins and check-outs they cause are kept.
import type { Knex } from 'knex';
import { READ_MODELS, type AuditLogRow } from '../shared/db/read-models.js';
import { EVENT_TYPES } from '../shared/domain/event-schemas.js';
import type { Projection, ProjectedEventType, ProjectionEvent } from './projection.js';

/** The kinds an admin filters by, in the order the page offers them. */
export const AUDIT_KINDS = ['passes', 'visits', 'delivery', 'members', 'facilities', 'people', 'api_keys', 'clients', 'organization'] as const;
export type AuditKind = (typeof AUDIT_KINDS)[number];

const LEFT_OUT: ReadonlySet<string> = new Set(['DoorAccessRecorded']);

/** The kind of an event type, or null for one the audit log does not keep. */
export function auditKindOf(type: string): AuditKind | null {
  if (LEFT_OUT.has(type)) return null;
  if (type === 'PassCheckedIn' || type === 'PassCheckedOut') return 'visits';
  if (type.startsWith('PassDelivery') || type === 'PassMessageResendRequested') return 'delivery';
  if (type.startsWith('Pass')) return 'passes';
  if (type.startsWith('MemberEmail')) return 'people';
  if (type.startsWith('Member')) return 'members';
  if (type.startsWith('Facility')) return 'facilities';
  if (type.startsWith('User') || type.startsWith('Role') || type.startsWith('Invitation')) return 'people';
  if (type.startsWith('ApiKey')) return 'api_keys';
  if (type.startsWith('OAuthClient')) return 'clients';
  if (type.startsWith('Organization')) return 'organization';
  return null;
}

/** What an event is about: a kind of thing and its id (never a name). */
export function auditSubjectOf(data: Record<string, unknown>): { subjectType: string; subjectId: string } {
  const pick = (key: string) => (data[key] === undefined || data[key] === null ? null : String(data[key]));
  const candidates: Array<[string, string | null]> = [
    ['pass', pick('publicId')],
    ['batch', pick('batchId')],
    ['member', pick('memberId')],
    ['api_key', pick('keyId')],
    ['client', pick('clientId')],
    ['invitation', pick('inviteId')],
    ['facility', pick('facilityId')],
    ['user', pick('userId')],
  ];
  for (const [subjectType, subjectId] of candidates) if (subjectId !== null) return { subjectType, subjectId };
  return { subjectType: 'organization', subjectId: String(data.orgId) };
}

const HANDLED = EVENT_TYPES.filter((type) => auditKindOf(type) !== null) as ProjectedEventType[];

export const auditLogProjection: Projection<AuditLogRow> = {
  name: READ_MODELS.auditLog,
  version: 1,
  handles: HANDLED,
  keyColumn: 'event_id',

  keyOf(event: ProjectionEvent) {
    const data = event.data as Record<string, unknown>;
    return typeof data.orgId === 'number' && auditKindOf(event.type) !== null ? event.id : null;
  },

  apply(row, event) {
    if (row) return undefined;
    const data = event.data as Record<string, unknown>;
    const actor = event.metadata.actor;
    const { subjectType, subjectId } = auditSubjectOf(data);
    return {
      event_id: event.id,
      org_id: data.orgId as number,
      occurred_at: event.metadata.occurredAt,
      event_type: event.type,
      kind: auditKindOf(event.type)!,
      actor_kind: actor.kind,
      actor_user_id: actor.kind === 'user' ? actor.id : actor.kind === 'apiKey' ? actor.userId : null,
      actor_key_id: actor.kind === 'apiKey' ? actor.id : null,
      actor_name: actor.kind === 'system' ? actor.name : null,
      subject_type: subjectType,
      subject_id: subjectId,
    };
  },

  async createTable(knex: Knex, table: string) {
    await knex.raw(
      `CREATE TABLE ?? (
        event_id      uuid        PRIMARY KEY,
        org_id        bigint      NOT NULL,
        occurred_at   timestamptz NOT NULL,
        event_type    text        NOT NULL,
        kind          text        NOT NULL,
        actor_kind    text        NOT NULL,
        actor_user_id bigint,
        actor_key_id  text,
        actor_name    text,
        subject_type  text        NOT NULL,
        subject_id    text        NOT NULL
      )`,
      [table],
    );
  },

  indexes: [
    // Newest first, the event id breaking ties: the whole log, and one kind of it.
    { suffix: 'org_time_idx', on: '(org_id, occurred_at DESC, event_id DESC)' },
    { suffix: 'org_kind_time_idx', on: '(org_id, kind, occurred_at DESC, event_id DESC)' },
    // Which members on a page were erased (the page names none of them).
    { suffix: 'subject_idx', on: '(org_id, subject_type, subject_id, event_type)' },
  ],
};
