// pass_batches: one row per batch of passes (one create call, one guest): where its pass page's
// token leads (by hash), where its sealed guest data is in the log, and how its delivery went.
// Serves the pass page (`/p/{token}`) and the `delivery` object of the pass listings.
import type { Knex } from 'knex';
import type { PassBatchRow } from '../shared/db/read-models.js';
import { READ_MODELS } from '../shared/db/read-models.js';
import type { DeliveryChannel } from '../shared/domain/delivery-events.js';
import type { Projection, ProjectionEvent } from './projection.js';

type WrittenPassBatchRow = Omit<PassBatchRow, 'valid_from' | 'valid_until' | 'created_at'> & {
  valid_from: Date | string;
  valid_until: Date | string;
  created_at: Date | string;
};

const DELIVERY_COLUMN: Readonly<Record<DeliveryChannel, 'email_delivery' | 'sms_delivery'>> = {
  email: 'email_delivery',
  sms: 'sms_delivery',
};

export const passBatchesProjection: Projection<WrittenPassBatchRow> = {
  name: READ_MODELS.passBatches,
  version: 1,
  handles: ['PassCreated', 'PassDeliverySucceeded', 'PassDeliveryFailed', 'PassMessageResendRequested'],
  keyColumn: 'batch_id',
  opensGuestData: true,

  keyOf(event: ProjectionEvent) {
    switch (event.type) {
      case 'PassCreated':
      case 'PassDeliverySucceeded':
      case 'PassDeliveryFailed':
      case 'PassMessageResendRequested':
        return event.data.batchId;
      default:
        return null;
    }
  },

  apply(row, event) {
    switch (event.type) {
      case 'PassCreated': {
        // Every pass of a batch carries the same sealed guest data: the first one seen is enough.
        if (row) return undefined;
        const d = event.data;
        // A batch from before delivery existed (no link) was never sent, nor is an erased guest's.
        const delivers = d.passLinkHash !== null && d.guest !== null;
        return {
          batch_id: d.batchId,
          link_hash: d.passLinkHash,
          org_id: d.orgId,
          facility_id: d.facilityId,
          created_by: d.createdBy,
          batch_size: d.batchSize,
          stream_name: event.streamName,
          stream_revision: event.revision,
          arrival_date: d.arrivalDate,
          arrival_time: d.arrivalTime,
          valid_from: d.validFrom,
          valid_until: d.validUntil,
          created_at: event.metadata.occurredAt,
          email_delivery: delivers && d.guest?.email ? 'pending' : null,
          sms_delivery: delivers && d.guest?.phone ? 'pending' : null,
        };
      }
      case 'PassDeliverySucceeded':
      case 'PassDeliveryFailed': {
        if (!row) return undefined;
        const column = DELIVERY_COLUMN[event.data.channel];
        // No address, no delivery (an erased guest's outcomes name both channels); a success is final.
        if (row[column] === null || row[column] === 'sent') return undefined;
        const status = event.type === 'PassDeliverySucceeded' ? 'sent' : event.data.final ? 'failed' : 'pending';
        return row[column] === status ? undefined : { ...row, [column]: status };
      }
      case 'PassMessageResendRequested': {
        // A new round: each channel with an address is pending again until its outcome.
        if (!row) return undefined;
        const again = (status: string | null) => (status === null ? null : 'pending');
        return { ...row, email_delivery: again(row.email_delivery), sms_delivery: again(row.sms_delivery) };
      }
      default:
        return undefined;
    }
  },

  async createTable(knex: Knex, table: string) {
    await knex.raw(
      `CREATE TABLE ?? (
        batch_id        text        PRIMARY KEY,
        link_hash       text,
        org_id          bigint      NOT NULL,
        facility_id     bigint      NOT NULL,
        created_by      bigint      NOT NULL,
        batch_size      integer     NOT NULL,
        stream_name     text        NOT NULL,
        stream_revision integer     NOT NULL,
        arrival_date    text        NOT NULL,
        arrival_time    text,
        valid_from      timestamptz NOT NULL,
        valid_until     timestamptz NOT NULL,
        created_at      timestamptz NOT NULL,
        email_delivery  text,
        sms_delivery    text
      )`,
      [table],
    );
  },

  indexes: [{ suffix: 'link_hash_key', unique: true, on: '(link_hash) WHERE link_hash IS NOT NULL' }],
};
