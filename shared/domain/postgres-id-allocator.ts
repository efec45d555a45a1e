// IdAllocator on PostgreSQL sequences (migration 002). Sequences never hand out a number twice,
// across processes and transactions, and are not rolled back: a failed command leaves a gap.
import type { Knex } from 'knex';
import type { IdAllocator, IdKind } from './id-allocator.js';
import { batchPerTurn } from '../db/turn-batch.js';
import { BlockReserve } from '../db/block-reserve.js';

const SEQUENCES: Readonly<Record<IdKind, string>> = {
  organization: 'organization_id_seq',
  facility: 'facility_id_seq',
  user: 'user_id_seq',
  pass: 'pass_id_seq',
  invitation: 'invitation_id_seq', // migration 006
};

/** Far above a batch of passes; a guard against a runaway count, not a business rule. */
const MAX_PER_CALL = 1000;

export interface IdAllocatorOptions {
  /**
   * Ids drawn ahead per kind and held by this process, so most calls need no round trip. Ids of
   * a block still held at exit are never used (gaps are allowed), and ids from two processes
   * interleave rather than follow the order of creation: for kinds drawn often (passes), whose
   * order comes from their creation time.
   */
  readonly blockSizes?: Partial<Record<IdKind, number>>;
}

/** The service's blocks: passes are drawn on every create; the other kinds seldom, and read better dense. */
export const SERVICE_ID_BLOCKS: IdAllocatorOptions = { blockSizes: { pass: 64 } };

export class PostgresIdAllocator implements IdAllocator {
  /** The draws of one event-loop turn, of every kind, in one statement. */
  private readonly draw: (request: { sequence: string; count: number }) => Promise<number[]>;
  private readonly held = new Map<IdKind, BlockReserve<number>>();

  constructor(
    knex: Knex,
    private readonly options: IdAllocatorOptions = {},
  ) {
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
    const blockSize = this.options.blockSizes?.[kind] ?? 1;
    if (blockSize <= 1) return this.draw({ sequence, count });
    let held = this.held.get(kind);
    if (!held) this.held.set(kind, (held = new BlockReserve(() => this.draw({ sequence, count: blockSize }), blockSize / 4)));
    return held.take(count);
  }
}
