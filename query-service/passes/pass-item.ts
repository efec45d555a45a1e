// A pass as the API shows it (spec "Pass"): one row shape and mapping for the user's list and
// get and the organization list, which adds `created_by` on top.
import type { PassListRow } from '../../shared/db/read-models.js';

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
}

export type PassRow = Pick<
  PassListRow,
  'public_id' | 'first_name' | 'last_name' | 'email' | 'phone' | 'status' | 'created_at' | 'arrival_date' | 'arrival_time'
> & { facility_id: number | null; facility_name: string | null };

/** Columns of pass_list `p` joined with facilities `f`. */
export const PASS_COLUMNS = [
  'p.public_id', 'p.first_name', 'p.last_name', 'p.email', 'p.phone', 'p.status', 'p.created_at',
  'p.arrival_date', 'p.arrival_time', 'p.facility_id', 'f.name as facility_name',
] as const;

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
  };
}
