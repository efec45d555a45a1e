// SubjectKeyStore on PostgreSQL (table subject_keys, migration 002). Keys live outside the
// event log, so destroying a subject's rows makes its sealed data unreadable for good.
import { randomBytes, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { SubjectKey, SubjectKeyStore } from './subject-keys.js';
import { batchPerTurn } from '../db/turn-batch.js';
import { BlockReserve } from '../db/block-reserve.js';

const TABLE = 'subject_keys';

/**
 * How long a key this process created is also answered from memory: long enough for the
 * projection runner of the same process to open the events sealed with it without a read.
 */
const RECENT_MS = 5_000;

/** Keys for new subjects stored ahead, per statement; a refill starts when fewer than LOW are left. */
const READY_BLOCK = 64;
const READY_LOW = 16;

export class PostgresSubjectKeyStore implements SubjectKeyStore {
  /** The keys created in one event-loop turn, stored by one statement (one commit). */
  private readonly store: (row: { keyId: string; subjectId: string; key: Buffer }) => Promise<void>;
  /** Keys created here in the last RECENT_MS, oldest first; destroy() removes a subject's at once. */
  private readonly recent = new Map<string, { subjectId: string; key: Buffer; createdAt: number }>();
  /** Stored keys for new subjects, not handed out yet. Lost on exit: rows nothing refers to. */
  private readonly ready = new BlockReserve<SubjectKey & { subjectId: string }>(async () => {
    const block = Array.from({ length: READY_BLOCK }, () => ({ keyId: randomUUID(), subjectId: randomUUID(), key: randomBytes(32) }));
    await this.insert(block);
    return block;
  }, READY_LOW);

  constructor(private readonly knex: Knex) {
    this.store = batchPerTurn(async (rows) => {
      await this.insert(rows);
      return rows.map(() => undefined);
    });
  }

  async create(subjectId: string): Promise<SubjectKey> {
    const key: SubjectKey = { keyId: randomUUID(), key: randomBytes(32) };
    await this.store({ keyId: key.keyId, subjectId, key: key.key });
    this.remember(key.keyId, subjectId, key.key);
    return key;
  }

  async createForNewSubject(): Promise<SubjectKey & { subjectId: string }> {
    const [next] = (await this.ready.take()) as [SubjectKey & { subjectId: string }];
    this.remember(next.keyId, next.subjectId, next.key);
    return next;
  }

  private remember(keyId: string, subjectId: string, key: Buffer): void {
    this.forgetExpired();
    this.recent.set(keyId, { subjectId, key, createdAt: Date.now() });
  }

  private async insert(rows: ReadonlyArray<{ keyId: string; subjectId: string; key: Buffer }>): Promise<void> {
    await this.knex.raw(`INSERT INTO ${TABLE} (key_id, subject_id, key) SELECT * FROM unnest(?::text[], ?::text[], ?::bytea[])`, [
      rows.map((r) => r.keyId),
      rows.map((r) => r.subjectId),
      rows.map((r) => r.key),
    ]);
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
    // `= any(array)` keeps one statement shape whatever the count (no giant IN lists).
    const rows: Array<{ key_id: string; key: Buffer }> = await this.knex(TABLE)
      .select('key_id', 'key')
      .whereRaw('key_id = any(?::text[])', [unique]);
    for (const row of rows) found.set(row.key_id, row.key);
    return found;
  }

  /** Drops the recent keys older than RECENT_MS (the map is in creation order). */
  private forgetExpired(): void {
    const expired = Date.now() - RECENT_MS;
    for (const [keyId, entry] of this.recent) {
      if (entry.createdAt > expired) break;
      this.recent.delete(keyId);
    }
  }

  async destroy(subjectId: string): Promise<void> {
    this.ready.discard((k) => k.subjectId === subjectId);
    for (const [keyId, entry] of this.recent) if (entry.subjectId === subjectId) this.recent.delete(keyId);
    await this.knex(TABLE).where({ subject_id: subjectId }).delete();
  }
}
