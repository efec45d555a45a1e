// The user of an organization with an email address, from the users read model (addresses are
// stored normalised: user-decider.ts normaliseEmail).
import type { Knex } from 'knex';
import { READ_MODELS, type UserRow } from '../../shared/db/read-models.js';

/** The id of the organization's user with this normalised address, or null (the lowest id, should there be several). */
export async function memberIdByEmail(db: Knex, orgId: number, email: string): Promise<number | null> {
  const row = await db<UserRow>(READ_MODELS.users).where({ org_id: orgId }).andWhereRaw('lower(email) = ?', [email]).orderBy('user_id').first('user_id');
  return row === undefined ? null : Number(row.user_id);
}
