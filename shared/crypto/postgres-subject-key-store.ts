// SubjectKeyStore on PostgreSQL (table subject_keys, migrations 002 and 010). Keys live outside
// the event log, so destroying a subject's rows makes its sealed data unreadable for good. Each key
// is stored wrapped by the data KEK ring (data-key-ring.ts): a dump of the table opens nothing
// without the KEK. Rows from before migration 010 hold their key in the clear until rewrapAll().
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { SubjectKey, SubjectKeyStore } from './subject-keys.js';
import { batchPerTurn } from '../db/turn-batch.js';
import { BlockReserve } from '../db/block-reserve.js';
import type { DataKeyRing } from './data-key-ring.js';
import { rewrapContactSearchKey } from './postgres-contact-search-key.js';
import { pooledRandomBytes } from './random-pool.js';

const TABLE = 'subject_keys';

/**
 * How long a key this process created is also answered from memory: long enough for the
 * projection runner of the same process to open the events sealed with it without a read.
 */
const RECENT_MS = 5_000;

/** Keys for new subjects stored ahead, per statement; a refill starts when fewer than LOW are left. */
const READY_BLOCK = 64;
const READY_LOW = 16;

const KEY_BYTES = 32;

/** Rows rewrapped per transaction by rewrapAll(): short transactions, few round trips. */
const REWRAP_BATCH = 1000;

interface StoredKeyRow {
  key_id: string;
  key: Buffer | null;
  kek_id: string | null;
  wrapped_key: Buffer | null;
}

export class PostgresSubjectKeyStore implements SubjectKeyStore {
  /** The keys created in one event-loop turn (by create and createMany calls), stored by one statement (one commit). */
  private readonly store: (rows: ReadonlyArray<{ keyId: string; subjectId: string; key: Buffer }>) => Promise<void>;
  /** Keys created here in the last RECENT_MS, oldest first; destroy() removes a subject's at once. */
  private readonly recent = new Map<string, { subjectId: string; key: Buffer; createdAt: number }>();
  /** No recent key is older than this: forgetExpired() looks at the map only once one may have expired. */
  private recentSince = Infinity;
  /** Stored keys for new subjects, not handed out yet. Lost on exit: rows nothing refers to. */
  private readonly ready = new BlockReserve<SubjectKey & { subjectId: string }>(async () => {
    const block = Array.from({ length: READY_BLOCK }, () => ({ keyId: randomUUID(), subjectId: randomUUID(), key: pooledRandomBytes(KEY_BYTES) }));
    await this.insert(block);
    return block;
  }, READY_LOW);

  constructor(
    private readonly knex: Knex,
    private readonly ring: DataKeyRing,
  ) {
    this.store = batchPerTurn(async (calls) => {
      await this.insert(calls.flat());
      return calls.map(() => undefined);
    });
  }

  async create(subjectId: string): Promise<SubjectKey> {
    const key: SubjectKey = { keyId: randomUUID(), key: pooledRandomBytes(KEY_BYTES) };
    await this.store([{ keyId: key.keyId, subjectId, key: key.key }]);
    this.remember([{ keyId: key.keyId, subjectId, key: key.key }]);
    return key;
  }

  async createMany(subjectIds: readonly string[]): Promise<SubjectKey[]> {
    const rows = subjectIds.map((subjectId) => ({ keyId: randomUUID(), subjectId, key: pooledRandomBytes(KEY_BYTES) }));
    if (rows.length > 0) await this.store(rows);
    this.remember(rows);
    return rows.map(({ keyId, key }) => ({ keyId, key }));
  }

  async createForNewSubject(): Promise<SubjectKey & { subjectId: string }> {
    const [next] = (await this.ready.take()) as [SubjectKey & { subjectId: string }];
    this.remember([next]);
    return next;
  }

  private remember(keys: ReadonlyArray<{ keyId: string; subjectId: string; key: Buffer }>): void {
    this.forgetExpired();
    const createdAt = Date.now();
    for (const { keyId, subjectId, key } of keys) this.recent.set(keyId, { subjectId, key, createdAt });
    this.recentSince = Math.min(this.recentSince, createdAt);
  }

  /** Stores keys wrapped under the current KEK only; the clear key never reaches the database. */
  private async insert(rows: ReadonlyArray<{ keyId: string; subjectId: string; key: Buffer }>): Promise<void> {
    const wrapped = rows.map((r) => this.ring.wrap(r.key).wrapped);
    await this.knex.raw(
      `INSERT INTO ${TABLE} (key_id, subject_id, kek_id, wrapped_key) SELECT k.key_id, k.subject_id, ?, k.wrapped_key FROM unnest(?::text[], ?::text[], ?::bytea[]) AS k(key_id, subject_id, wrapped_key)`,
      [this.ring.currentKekId, rows.map((r) => r.keyId), rows.map((r) => r.subjectId), wrapped],
    );
  }

  /** A row's key: unwrapped, or in the clear for a row not rewrapped yet. Throws DataKeyRingError, never answers "absent". */
  private keyOf(row: StoredKeyRow): Buffer {
    if (row.kek_id !== null && row.wrapped_key !== null) return this.ring.unwrap(row.kek_id, row.wrapped_key);
    if (row.key !== null) return row.key;
    throw new Error(`subject key ${row.key_id} has neither a key nor a wrapped key`);
  }

  async getMany(keyIds: readonly string[]): Promise<Map<string, Buffer>> {
    const found = new Map<string, Buffer>();
    this.forgetExpired();
    const unique: string[] = [];
    for (const keyId of new Set(keyIds)) {
      const entry = this.recent.get(keyId);
      if (entry) found.set(keyId, entry.key);
      else unique.push(keyId);
    }
    if (unique.length === 0) return found;
    // One statement shape whatever the count (no giant IN lists), and one index probe per key
    // (LATERAL, kept apart by its LIMIT): on statistics a bulk insert has made stale, `key_id =
    // any(array)` of a few thousand keys was planned as a scan of the whole table.
    const { rows } = await this.knex.raw<{ rows: StoredKeyRow[] }>(
      `SELECT s.key_id, s.key, s.kek_id, s.wrapped_key FROM unnest(?::text[]) AS k(key_id)
       CROSS JOIN LATERAL (SELECT * FROM ${TABLE} WHERE ${TABLE}.key_id = k.key_id LIMIT 1) s`,
      [unique],
    );
    // A key that does not unwrap throws rather than go missing: absent means erased to every caller.
    for (const row of rows) found.set(row.key_id, this.keyOf(row));
    return found;
  }

  /** Drops the recent keys older than RECENT_MS (the map is in creation order). */
  private forgetExpired(): void {
    const expired = Date.now() - RECENT_MS;
    if (this.recentSince > expired) return; // called per key created: most calls end here
    this.recentSince = Infinity;
    for (const [keyId, entry] of this.recent) {
      if (entry.createdAt > expired) {
        this.recentSince = entry.createdAt;
        break;
      }
      this.recent.delete(keyId);
    }
  }

  /**
   * Wraps every legacy row (key in the clear) and rewraps every row under another KEK of the ring
   * under the current one, with the contact search key: after it, the clear keys are gone and the
   * previous KEKs can be retired. Batches of REWRAP_BATCH rows, one short transaction each; rows
   * another process is rewrapping are skipped (it finishes them). Idempotent, and cheap with nothing
   * left to do (index lookups only). Throws DataKeyRingError, having stopped, on a row under a
   * KEK the ring does not hold.
   */
  async rewrapAll(): Promise<{ rewrapped: number }> {
    let rewrapped = await rewrapContactSearchKey(this.knex, this.ring);
    const stale = (await this.kekIdsInUse()).filter((id) => id !== this.ring.currentKekId);
    for (const kekId of [null, ...stale]) {
      for (;;) {
        const done = await this.rewrapBatch(kekId);
        rewrapped += done;
        if (done === 0) break;
      }
    }
    return { rewrapped };
  }

  /** The distinct kek ids of the table, read by a skip scan of its kek_id index (a few index probes). */
  private async kekIdsInUse(): Promise<string[]> {
    const { rows } = await this.knex.raw<{ rows: Array<{ kek_id: string }> }>(`
      WITH RECURSIVE ids(kek_id) AS (
        (SELECT kek_id FROM ${TABLE} WHERE kek_id IS NOT NULL ORDER BY kek_id LIMIT 1)
        UNION ALL
        SELECT (SELECT s.kek_id FROM ${TABLE} s WHERE s.kek_id > ids.kek_id ORDER BY s.kek_id LIMIT 1)
        FROM ids WHERE ids.kek_id IS NOT NULL
      )
      SELECT kek_id FROM ids WHERE kek_id IS NOT NULL`);
    return rows.map((r) => r.kek_id);
  }

  /** Rewraps up to REWRAP_BATCH rows under `kekId` (null: legacy rows) in one transaction; how many it did. */
  private async rewrapBatch(kekId: string | null): Promise<number> {
    return this.knex.transaction(async (trx) => {
      const rows: StoredKeyRow[] = await trx(TABLE)
        .select('key_id', 'key', 'kek_id', 'wrapped_key')
        .where((q) => (kekId === null ? q.whereNull('kek_id') : q.where('kek_id', kekId)))
        .limit(REWRAP_BATCH)
        .forUpdate()
        .skipLocked();
      if (rows.length === 0) return 0;
      const wrapped = rows.map((row) => this.ring.wrap(this.keyOf(row)).wrapped);
      await trx.raw(
        `UPDATE ${TABLE} AS s SET key = NULL, kek_id = ?, wrapped_key = k.wrapped_key
         FROM unnest(?::text[], ?::bytea[]) AS k(key_id, wrapped_key) WHERE s.key_id = k.key_id`,
        [this.ring.currentKekId, rows.map((r) => r.key_id), wrapped],
      );
      return rows.length;
    });
  }

  async destroy(subjectId: string): Promise<void> {
    this.ready.discard((k) => k.subjectId === subjectId);
    for (const [keyId, entry] of this.recent) if (entry.subjectId === subjectId) this.recent.delete(keyId);
    await this.knex(TABLE).where({ subject_id: subjectId }).delete();
  }
}
