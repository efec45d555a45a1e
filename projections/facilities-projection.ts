// facilities: one row per facility, with the flags pass creation and the facility list need.
import type { Knex } from 'knex';
import type { FacilityRow } from '../shared/db/read-models.js';
import { READ_MODELS } from '../shared/db/read-models.js';
import type { Projection, ProjectionEvent } from './projection.js';
import { DEFAULT_TIME_ZONE } from '../shared/domain/time-zone.js';

export const facilitiesProjection: Projection<FacilityRow> = {
  name: READ_MODELS.facilities,
  // 2: the time zone (FacilityDetailsChanged).
  version: 2,
  handles: ['FacilityAdded', 'FacilityDetailsChanged', 'FacilitySuspended', 'FacilityResumed', 'FacilityDeactivated'],
  keyColumn: 'facility_id',

  keyOf(event: ProjectionEvent) {
    switch (event.type) {
      case 'FacilityAdded':
      case 'FacilityDetailsChanged':
      case 'FacilitySuspended':
      case 'FacilityResumed':
      case 'FacilityDeactivated':
        return event.data.facilityId;
      default:
        return null;
    }
  },

  apply(row, event) {
    switch (event.type) {
      case 'FacilityAdded': {
        if (row) return undefined;
        const d = event.data;
        return {
          facility_id: d.facilityId,
          org_id: d.orgId,
          name: d.name,
          description: d.description,
          is_active: true,
          suspended: false,
          time_zone: DEFAULT_TIME_ZONE,
          created_at: new Date(event.metadata.occurredAt),
        };
      }
      case 'FacilityDetailsChanged': {
        if (!row) return undefined;
        const { name, description, timeZone } = event.data;
        return { ...row, name, description, time_zone: timeZone };
      }
      case 'FacilitySuspended':
        return row && !row.suspended ? { ...row, suspended: true } : undefined;
      case 'FacilityResumed':
        return row && row.suspended ? { ...row, suspended: false } : undefined;
      case 'FacilityDeactivated':
        return row && row.is_active ? { ...row, is_active: false } : undefined;
      default:
        return undefined;
    }
  },

  async createTable(knex: Knex, table: string) {
    await knex.raw(
      `CREATE TABLE ?? (
        facility_id bigint      PRIMARY KEY,
        org_id      bigint      NOT NULL,
        name        text        NOT NULL,
        description text,
        is_active   boolean     NOT NULL,
        suspended   boolean     NOT NULL,
        time_zone   text        NOT NULL,
        created_at  timestamptz NOT NULL
      )`,
      [table],
    );
  },

  indexes: [{ suffix: 'org_idx', on: '(org_id, facility_id)' }],
};
