// The service's contact search key (contact-search.ts) on PostgreSQL: one row of table
// contact_search_key (migration 010), wrapped by the data KEK ring like every data key. Created
// once: the first writer wins and every other process reads what it wrote.
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { HmacContactHasher } from './contact-search.js';
import type { DataKeyRing } from './data-key-ring.js';

const TABLE = 'contact_search_key';
const SEARCH_KEY_BYTES = 32;

interface SearchKeyRow {
  kek_id: string;
  wrapped_key: Buffer;
}

/**
 * The hasher of contact search values under the stored search key, creating the key on first use.
 * Throws DataKeyRingError when the key is wrapped under a KEK the ring does not hold (a process
 * given another DATA_KEY_ENCRYPTION_KEY stops here, before it wraps anything of its own).
 */
export async function loadContactHasher(knex: Knex, ring: DataKeyRing): Promise<HmacContactHasher> {
  let row: SearchKeyRow | undefined = await knex(TABLE).first('kek_id', 'wrapped_key');
  if (!row) {
    const { kekId, wrapped } = ring.wrap(randomBytes(SEARCH_KEY_BYTES));
    await knex.raw(`INSERT INTO ${TABLE} (kek_id, wrapped_key) VALUES (?, ?) ON CONFLICT DO NOTHING`, [kekId, wrapped]);
    row = await knex(TABLE).first('kek_id', 'wrapped_key');
    if (!row) throw new Error('the contact search key vanished right after it was stored');
  }
  return new HmacContactHasher(ring.unwrap(row.kek_id, row.wrapped_key));
}

/** Rewraps the search key under the ring's current KEK if another one wrapped it: 1 when it did, else 0. */
export async function rewrapContactSearchKey(knex: Knex, ring: DataKeyRing): Promise<number> {
  return knex.transaction(async (trx) => {
    const row: SearchKeyRow | undefined = await trx(TABLE).forUpdate().first('kek_id', 'wrapped_key');
    if (!row || row.kek_id === ring.currentKekId) return 0;
    const { kekId, wrapped } = ring.wrap(ring.unwrap(row.kek_id, row.wrapped_key));
    await trx(TABLE).update({ kek_id: kekId, wrapped_key: wrapped });
    return 1;
  });
}
