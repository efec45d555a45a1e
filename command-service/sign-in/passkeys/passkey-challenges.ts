// Pending WebAuthn ceremonies, kept server-side in PostgreSQL (migration 008), keyed by a random
// handle that the browser holds in an HttpOnly cookie.
//
// Why server-side rather than the challenge itself in a signed cookie: a signed cookie can prove
// that we issued a challenge, but not that it has not been used already; the browser (or anyone
// who copied the cookie and an assertion) could present the same pair again, and a passkey that
// keeps no signature counter (most synced passkeys report 0) would then sign in twice. Here
// take() deletes the row it returns, so a challenge is answered once, and the handle binds it to
// the browser that asked for it. In PostgreSQL rather than in the process, a ceremony may end on
// another command-service instance than it began on. Only the handle's SHA-256 is stored.
import { createHash, randomBytes } from 'node:crypto';
import type { Knex } from 'knex';

export type CeremonyPurpose = 'registration' | 'authentication';

export interface PendingCeremony {
  readonly purpose: CeremonyPurpose;
  /** The challenge as sent to the browser (base64url). */
  readonly challenge: string;
  /** For registration: the signed-in user the passkey is being added to. */
  readonly userId: number | null;
  readonly expiresAt: Date;
}

/** Long enough for a person to find their authenticator, short enough to be useless later. */
export const CEREMONY_TTL_SECONDS = 300;
/** Expired rows removed by each begin: the table stays as small as the ceremonies under way. */
const SWEEP_BATCH = 100;

const hashOf = (handle: string) => createHash('sha256').update(handle).digest();

export class PasskeyChallenges {
  constructor(private readonly knex: Knex) {}

  /** Remembers a ceremony, replacing the browser's previous one; returns the handle for its cookie. */
  async begin(ceremony: Omit<PendingCeremony, 'expiresAt'>, now: Date, previousHandle?: string): Promise<string> {
    const handle = randomBytes(32).toString('base64url');
    const expiresAt = new Date(now.getTime() + CEREMONY_TTL_SECONDS * 1000);
    // One statement: the browser's previous ceremony and some expired ones go, the new one comes.
    await this.knex.raw(
      `WITH replaced AS (
         DELETE FROM passkey_ceremonies WHERE handle_hash = ?
       ), swept AS (
         DELETE FROM passkey_ceremonies WHERE handle_hash IN (
           SELECT handle_hash FROM passkey_ceremonies WHERE expires_at <= ? ORDER BY expires_at LIMIT ${SWEEP_BATCH}
           FOR UPDATE SKIP LOCKED)
       )
       INSERT INTO passkey_ceremonies (handle_hash, purpose, challenge, user_id, expires_at) VALUES (?, ?, ?, ?, ?)`,
      [previousHandle ? hashOf(previousHandle) : null, now, hashOf(handle), ceremony.purpose, ceremony.challenge, ceremony.userId, expiresAt],
    );
    return handle;
  }

  /** Removes and returns the ceremony of this handle if it is live and of this purpose; else null. */
  async take(handle: string | undefined, purpose: CeremonyPurpose, now: Date): Promise<PendingCeremony | null> {
    if (!handle) return null;
    const { rows } = await this.knex.raw<{ rows: Array<{ purpose: CeremonyPurpose; challenge: string; user_id: string | number | null; expires_at: Date }> }>(
      'DELETE FROM passkey_ceremonies WHERE handle_hash = ? RETURNING purpose, challenge, user_id, expires_at',
      [hashOf(handle)],
    );
    const row = rows[0];
    if (!row || row.purpose !== purpose || row.expires_at.getTime() <= now.getTime()) return null;
    return { purpose: row.purpose, challenge: row.challenge, userId: row.user_id === null ? null : Number(row.user_id), expiresAt: row.expires_at };
  }
}
