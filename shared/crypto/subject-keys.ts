// Crypto-shredding: a guest's personal data is sealed with a key of its own, kept outside the
// event log, so erasing the guest means destroying the key, never rewriting the log.
import type { Sealed } from '../domain/events.js';

export interface SubjectKey {
  readonly keyId: string;
  readonly key: Buffer; // 32 bytes, AES-256-GCM
}

/** Port. The PostgreSQL adapter lives in postgres-subject-key-store.ts. */
export interface SubjectKeyStore {
  /** Creates and stores a new key for a subject (for example a user). */
  create(subjectId: string): Promise<SubjectKey>;
  /**
   * A stored key for a new subject whose id the store chooses (a random UUID, for example a pass
   * batch's id). Stores may keep such keys ready ahead of time, so a caller seldom waits for a write.
   */
  createForNewSubject(): Promise<SubjectKey & { readonly subjectId: string }>;
  /** A new key for each subject, in order, stored with one write (bulk use cases: the member import). */
  createMany(subjectIds: readonly string[]): Promise<SubjectKey[]>;
  /** Keys by key id; destroyed or unknown keys are absent from the map. */
  getMany(keyIds: readonly string[]): Promise<Map<string, Buffer>>;
  /** Destroys every key of the subject: its sealed data can never be read again. */
  destroy(subjectId: string): Promise<void>;
}

export type { Sealed };
