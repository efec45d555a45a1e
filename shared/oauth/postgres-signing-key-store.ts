// SigningKeyStore on PostgreSQL (table from shared/db/migrations/005_oauth_signing_keys.ts).
import pg from 'pg';
import { SigningKeyRotationConflict, type PublicSigningJwk, type SigningKeyRecord, type SigningKeyStore } from './signing-keys.js';

const UNIQUE_VIOLATION = '23505';

interface Row {
  kid: string;
  public_jwk: PublicSigningJwk;
  kek_id: string;
  private_key_iv: Buffer;
  private_key_ciphertext: Buffer;
  private_key_tag: Buffer;
  created_at: Date;
  rotated_at: Date | null;
  retire_after: Date | null;
}

const COLUMNS = 'kid, public_jwk, kek_id, private_key_iv, private_key_ciphertext, private_key_tag, created_at, rotated_at, retire_after';
const INSERT = `INSERT INTO oauth_signing_keys (kid, alg, public_jwk, kek_id, private_key_iv, private_key_ciphertext, private_key_tag, created_at)
  VALUES ($1, 'RS256', $2, $3, $4, $5, $6, $7)`;

function toRecord(row: Row): SigningKeyRecord {
  return {
    kid: row.kid,
    publicJwk: row.public_jwk,
    privateKey: { kekId: row.kek_id, iv: row.private_key_iv, ciphertext: row.private_key_ciphertext, tag: row.private_key_tag },
    createdAt: row.created_at,
    rotatedAt: row.rotated_at,
    retireAfter: row.retire_after,
  };
}

function insertValues(r: SigningKeyRecord): unknown[] {
  return [r.kid, JSON.stringify(r.publicJwk), r.privateKey.kekId, r.privateKey.iv, r.privateKey.ciphertext, r.privateKey.tag, r.createdAt];
}

export class PostgresSigningKeyStore implements SigningKeyStore {
  constructor(private readonly pool: pg.Pool) {}

  async current(): Promise<SigningKeyRecord | null> {
    const { rows } = await this.pool.query<Row>(`SELECT ${COLUMNS} FROM oauth_signing_keys WHERE rotated_at IS NULL`);
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async published(now: Date): Promise<SigningKeyRecord[]> {
    const { rows } = await this.pool.query<Row>(
      `SELECT ${COLUMNS} FROM oauth_signing_keys WHERE retire_after IS NULL OR retire_after > $1 ORDER BY rotated_at DESC NULLS FIRST, kid`,
      [now],
    );
    return rows.map(toRecord);
  }

  async insertFirst(record: SigningKeyRecord): Promise<SigningKeyRecord> {
    // ON CONFLICT on the partial unique index: a concurrent first start keeps its key, we read it.
    await this.pool.query(`${INSERT} ON CONFLICT DO NOTHING`, insertValues(record));
    const current = await this.current();
    if (!current) throw new Error('no current signing key after insert');
    return current;
  }

  async rotate(previousKid: string, next: SigningKeyRecord, rotatedAt: Date, retireAfter: Date): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const updated = await client.query(
        'UPDATE oauth_signing_keys SET rotated_at = $2, retire_after = $3 WHERE kid = $1 AND rotated_at IS NULL',
        [previousKid, rotatedAt, retireAfter],
      );
      if (updated.rowCount !== 1) throw new SigningKeyRotationConflict(previousKid);
      await client.query(INSERT, insertValues(next));
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      // A concurrent rotation committed its new current key between our UPDATE and INSERT.
      if ((error as { code?: string }).code === UNIQUE_VIOLATION) throw new SigningKeyRotationConflict(previousKid);
      throw error;
    } finally {
      client.release();
    }
  }

  async deleteRetired(now: Date): Promise<number> {
    const result = await this.pool.query('DELETE FROM oauth_signing_keys WHERE retire_after <= $1', [now]);
    return result.rowCount ?? 0;
  }
}
