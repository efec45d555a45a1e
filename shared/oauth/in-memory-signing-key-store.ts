// SigningKeyStore in memory: for unit tests and single-process tools. Same contract as the
// PostgreSQL adapter (test/oauth/signing-key-store.int.spec.ts runs both).
import { SigningKeyRotationConflict, type SigningKeyRecord, type SigningKeyStore } from './signing-keys.js';

/** The current key first, then rotated keys by rotation time, newest first. */
const rank = (r: SigningKeyRecord) => (r.rotatedAt === null ? Number.POSITIVE_INFINITY : r.rotatedAt.getTime());

export class InMemorySigningKeyStore implements SigningKeyStore {
  private records: SigningKeyRecord[] = [];

  async current(): Promise<SigningKeyRecord | null> {
    return this.records.find((r) => r.rotatedAt === null) ?? null;
  }

  async published(now: Date): Promise<SigningKeyRecord[]> {
    return this.records
      .filter((r) => r.retireAfter === null || r.retireAfter.getTime() > now.getTime())
      .sort((a, b) => rank(b) - rank(a));
  }

  async insertFirst(record: SigningKeyRecord): Promise<SigningKeyRecord> {
    const existing = await this.current();
    if (existing) return existing;
    this.records.push({ ...record, rotatedAt: null, retireAfter: null });
    return record;
  }

  async rotate(previousKid: string, next: SigningKeyRecord, rotatedAt: Date, retireAfter: Date): Promise<void> {
    const index = this.records.findIndex((r) => r.kid === previousKid && r.rotatedAt === null);
    if (index < 0) throw new SigningKeyRotationConflict(previousKid);
    this.records[index] = { ...this.records[index]!, rotatedAt, retireAfter };
    this.records.push({ ...next, rotatedAt: null, retireAfter: null });
  }

  async deleteRetired(now: Date): Promise<number> {
    const before = this.records.length;
    this.records = this.records.filter((r) => r.retireAfter === null || r.retireAfter.getTime() > now.getTime());
    return before - this.records.length;
  }
}
