// SubjectKeyStore on PostgreSQL (table subject_keys, migration 002). Keys live outside the
// event log, so destroying a subject's rows makes its sealed data unreadable for good.
import { randomBytes, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { SubjectKey, SubjectKeyStore } from './subject-keys.js';
import { batchPerTurn } from '../db/turn-batch.js';

const TABLE = 'subject_keys';

export class PostgresSubjectKeyStore implements SubjectKeyStore {
  /** The keys created in one event-loop turn, stored by one statement (one commit). */
  private readonly store: (row: { keyId: string; subjectId: string; key: Buffer }) => Promise<void>;

  constructor(private readonly knex: Knex) {
    this.store = batchPerTurn(async (rows) => {
      await knex.raw(`INSERT INTO ${TABLE} (key_id, subject_id, key) SELECT * FROM unnest(?::text[], ?::text[], ?::bytea[])`, [
        rows.map((r) => r.keyId),
        rows.map((r) => r.subjectId),
        rows.map((r) => r.key),
      ]);
      return rows.map(() => undefined);
    });
  }

  async create(subjectId: string): Promise<SubjectKey> {
    const key: SubjectKey = { keyId: randomUUID(), key: randomBytes(32) };
    await this.store({ keyId: key.keyId, subjectId, key: key.key });
    return key;
  }

  async getMany(keyIds: readonly string[]): Promise<Map<string, Buffer>> {
    const found = new Map<string, Buffer>();
    const unique = [...new Set(keyIds)];
    if (unique.length === 0) return found;
    // `= any(array)` keeps one statement shape whatever the count (no giant IN lists).
    const rows: Array<{ key_id: string; key: Buffer }> = await this.knex(TABLE)
      .select('key_id', 'key')
      .whereRaw('key_id = any(?::text[])', [unique]);
    for (const row of rows) found.set(row.key_id, row.key);
    return found;
  }

  async destroy(subjectId: string): Promise<void> {
    await this.knex(TABLE).where({ subject_id: subjectId }).delete();
  }
}
