// Crypto-shredding: a guest's personal data is sealed with a key of its own, kept outside the
// event log, so erasing the guest means destroying the key, never rewriting the log.
import type { Sealed } from '../domain/events.js';

export interface SubjectKey {
  readonly keyId: string;
  readonly key: Buffer; // 32 bytes, AES-256-GCM
}

/** Port. The PostgreSQL adapter lives in postgres-subject-key-store.ts. */
export interface SubjectKeyStore {
  /** Creates and stores a new key for a subject (for example a pass batch). */
  create(subjectId: string): Promise<SubjectKey>;
  /** Keys by key id; destroyed or unknown keys are absent from the map. */
  getMany(keyIds: readonly string[]): Promise<Map<string, Buffer>>;
  /** Destroys every key of the subject: its sealed data can never be read again. */
  destroy(subjectId: string): Promise<void>;
}

export type { Sealed };
