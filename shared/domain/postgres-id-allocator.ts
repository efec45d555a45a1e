// IdAllocator on PostgreSQL sequences (migration 002). Sequences never hand out a number twice,
// across processes and transactions, and are not rolled back: a failed command leaves a gap.
import type { Knex } from 'knex';
import type { IdAllocator, IdKind } from './id-allocator.js';

const SEQUENCES: Readonly<Record<IdKind, string>> = {
  organization: 'organization_id_seq',
  facility: 'facility_id_seq',
  user: 'user_id_seq',
  pass: 'pass_id_seq',
  invitation: 'invitation_id_seq', // migration 006
};

/** Far above a batch of passes; a guard against a runaway count, not a business rule. */
const MAX_PER_CALL = 1000;

export class PostgresIdAllocator implements IdAllocator {
  constructor(private readonly knex: Knex) {}

  async next(kind: IdKind, count = 1): Promise<number[]> {
    const sequence = SEQUENCES[kind];
    if (!sequence) throw new Error(`unknown id kind: ${String(kind)}`);
    if (!Number.isInteger(count) || count < 1 || count > MAX_PER_CALL) {
      throw new RangeError(`id count must be 1 to ${MAX_PER_CALL}`);
    }
    const { rows } = await this.knex.raw<{ rows: Array<{ id: string }> }>(
      'select nextval(?::regclass)::text as id from generate_series(1, ?::int)',
      [sequence, count],
    );
    // Rows of one call are not guaranteed to be consecutive (other sessions draw too) nor ordered.
    return rows.map((r) => Number(r.id)).sort((a, b) => a - b);
  }
}
