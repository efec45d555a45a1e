// A pass as the API shows it (spec "Pass"): one row shape and mapping for the user's list and
// get and the organization list, which adds `created_by` on top.
import type { Knex } from 'knex';
import { READ_MODELS, type DeliveryStatus, type PassBatchRow, type PassListRow } from '../../shared/db/read-models.js';

/** What became of the batch's email and SMS; null for a channel the guest gave no address for. */
export interface PassDelivery {
  email: DeliveryStatus | null;
  sms: DeliveryStatus | null;
}

export interface PassItem {
  public_id: string;
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  phone: string | null;
  status: string;
  created_at: string;
  arrival_date: string;
  arrival_time: string | null;
  facility_id: number | null;
  facility_name: string | null;
  /** Absent while the batch read model has no row for the pass (a rebuild under way). */
  delivery?: PassDelivery;
}

export type PassRow = Pick<
  PassListRow,
  'public_id' | 'first_name' | 'last_name' | 'email' | 'phone' | 'status' | 'created_at' | 'arrival_date' | 'arrival_time'
> & {
    facility_id: number | null;
    facility_name: string | null;
    /** pass_batches `b`'s key: null when it has no row for the batch. */
    batch_row: string | null;
  } & Pick<PassBatchRow, 'email_delivery' | 'sms_delivery'>;

/** Columns of pass_list `p` joined with facilities `f` and pass_batches `b` (passesWithDetails). */
export const PASS_COLUMNS = [
  'p.public_id', 'p.first_name', 'p.last_name', 'p.email', 'p.phone', 'p.status', 'p.created_at',
  'p.arrival_date', 'p.arrival_time', 'p.facility_id', 'f.name as facility_name',
  'b.batch_id as batch_row', 'b.email_delivery', 'b.sms_delivery',
] as const;

/** pass_list `p` with its facility `f` and its batch `b` (delivery), as every pass read needs them. */
export function passesWithDetails(db: Knex): Knex.QueryBuilder {
  return db({ p: READ_MODELS.passList })
    .leftJoin({ f: READ_MODELS.facilities }, 'f.facility_id', 'p.facility_id')
    .leftJoin({ b: READ_MODELS.passBatches }, 'b.batch_id', 'p.batch_id');
}

export function toPass(row: PassRow): PassItem {
  return {
    public_id: row.public_id,
    first_name: row.first_name,
    last_name: row.last_name,
    email: row.email,
    phone: row.phone,
    status: row.status,
    created_at: new Date(row.created_at).toISOString(),
    arrival_date: row.arrival_date,
    arrival_time: row.arrival_time,
    facility_id: row.facility_id === null ? null : Number(row.facility_id),
    facility_name: row.facility_name,
    ...(row.batch_row === null ? {} : { delivery: { email: row.email_delivery, sms: row.sms_delivery } }),
  };
}
