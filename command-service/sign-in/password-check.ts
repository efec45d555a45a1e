// Finds the account an email and password sign in, from the users read model.
//
// One email may have an account in several organizations: each is tried (those of the client
// waiting for this sign-in first, so the account that can use it wins when one password opens
// several). When no account with a password exists for the email, the same scrypt work is spent
// on a dummy hash, so the response time does not tell whether the email is known.
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { READ_MODELS, type UserRow } from '../../shared/db/read-models.js';
import { MAX_PASSWORD_LENGTH, hashPassword, verifyPassword } from '../../shared/crypto/password-hash.js';

export const MAX_EMAIL_LENGTH = 254;

let dummyHash: Promise<string> | null = null;
/**
 * A hash of a random password with the current parameters: verifying against it costs what a real
 * one does. Made once, when the routes are built (so the first unknown email is not slower).
 */
export function dummyPasswordHash(): Promise<string> {
  return (dummyHash ??= hashPassword(randomBytes(24).toString('base64url')));
}

export interface PasswordAccount {
  readonly userId: number;
  readonly orgId: number;
}

/** The normalised form users are stored under (lower-cased, trimmed); null when it cannot be an address. */
export function normaliseSignInEmail(input: string): string | null {
  const email = input.trim().toLowerCase();
  return email.length > 0 && email.length <= MAX_EMAIL_LENGTH && email.includes('@') ? email : null;
}

export async function checkPassword(
  db: Knex,
  email: string,
  password: string,
  options: { readonly preferredOrgId: number | null },
): Promise<PasswordAccount | null> {
  const rows: Array<Pick<UserRow, 'user_id' | 'org_id' | 'password_hash'>> = await db(READ_MODELS.users)
    .select('user_id', 'org_id', 'password_hash')
    .whereRaw('lower(email) = ?', [email])
    .orderBy('user_id');
  const candidates = rows
    .filter((r): r is typeof r & { password_hash: string } => r.password_hash !== null)
    .sort((a, b) => Number(Number(b.org_id) === options.preferredOrgId) - Number(Number(a.org_id) === options.preferredOrgId));
  if (candidates.length === 0 || password.length > MAX_PASSWORD_LENGTH) {
    await verifyPassword(password.slice(0, MAX_PASSWORD_LENGTH), await dummyPasswordHash());
    return null;
  }
  for (const row of candidates) {
    if (await verifyPassword(password, row.password_hash)) return { userId: Number(row.user_id), orgId: Number(row.org_id) };
  }
  return null;
}
