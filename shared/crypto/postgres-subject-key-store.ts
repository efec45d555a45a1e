// SubjectKeyStore on PostgreSQL (table subject_keys, migration 002). Keys live outside the
// event log, so destroying a subject's rows makes its sealed data unreadable for good.
import { randomBytes, randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { SubjectKey, SubjectKeyStore } from './subject-keys.js';

const TABLE = 'subject_keys';

export class PostgresSubjectKeyStore implements SubjectKeyStore {
  constructor(private readonly knex: Knex) {}

  async create(subjectId: string): Promise<SubjectKey> {
    const key: SubjectKey = { keyId: randomUUID(), key: randomBytes(32) };
    await this.knex(TABLE).insert({ key_id: key.keyId, subject_id: subjectId, key: key.key });
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
