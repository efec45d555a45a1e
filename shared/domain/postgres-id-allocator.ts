// IdAllocator on PostgreSQL sequences (migration 002). Sequences never hand out a number twice,
// across processes and transactions, and are not rolled back: a failed command leaves a gap.
import type { Knex } from 'knex';
import type { IdAllocator, IdKind } from './id-allocator.js';
import { batchPerTurn } from '../db/turn-batch.js';

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
  /** The draws of one event-loop turn, of every kind, in one statement. */
  private readonly draw: (request: { sequence: string; count: number }) => Promise<number[]>;

  constructor(knex: Knex) {
    this.draw = batchPerTurn(async (requests) => {
      const { rows } = await knex.raw<{ rows: Array<{ request: number; id: string }> }>(
        `SELECT r.request::int AS request, nextval(r.sequence::regclass)::text AS id
           FROM unnest(?::text[], ?::int[]) WITH ORDINALITY AS r(sequence, count, request),
                generate_series(1, r.count)`,
        [requests.map((r) => r.sequence), requests.map((r) => r.count)],
      );
      const ids = requests.map((): number[] => []);
      for (const row of rows) ids[row.request - 1]!.push(Number(row.id));
      // Rows are not guaranteed to be consecutive (other sessions draw too) nor ordered.
      return ids.map((drawn) => drawn.sort((a, b) => a - b));
    });
  }

  async next(kind: IdKind, count = 1): Promise<number[]> {
    const sequence = SEQUENCES[kind];
    if (!sequence) throw new Error(`unknown id kind: ${String(kind)}`);
    if (!Number.isInteger(count) || count < 1 || count > MAX_PER_CALL) {
      throw new RangeError(`id count must be 1 to ${MAX_PER_CALL}`);
    }
    return this.draw({ sequence, count });
  }
}
