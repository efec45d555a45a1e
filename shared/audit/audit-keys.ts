// The audit signing key: Ed25519, used only to sign tree heads (tree-head.ts), never tokens. Like
// the OAuth signing keys it is generated on first use, its private half sealed with AES-256-GCM
// under the OAuth key-encryption key and bound to its kid, and rotated by an operator command.
// Unlike them a rotated key is never retired from the published set: a head signed years ago must
// still verify. Its private half is destroyed at rotation.
import type { webcrypto } from 'node:crypto';
import type { Knex } from 'knex';
import { calculateJwkThumbprint, exportJWK, exportPKCS8, generateKeyPair, importPKCS8 } from 'jose';
import { open, seal } from '../oauth/key-encryption-key.js';
import { AUDIT_SIGNING_ALGORITHM, type AuditPublicJwk } from './tree-head.js';

export interface AuditSigningKey {
  readonly kid: string;
  readonly privateKey: webcrypto.CryptoKey;
}

export interface AuditKeySet {
  readonly keys: readonly AuditPublicJwk[];
}

interface KeyRow {
  kid: string;
  public_jwk: AuditPublicJwk;
  kek_id: string | null;
  private_key_iv: Buffer | null;
  private_key_ciphertext: Buffer | null;
  private_key_tag: Buffer | null;
}

async function generate(kek: Uint8Array, now: Date): Promise<{ row: Record<string, unknown>; key: AuditSigningKey }> {
  const pair = await generateKeyPair(AUDIT_SIGNING_ALGORITHM, { crv: 'Ed25519', extractable: true });
  const jwk = await exportJWK(pair.publicKey);
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string') throw new Error('unexpected Ed25519 JWK');
  const kid = await calculateJwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x: jwk.x }, 'sha256');
  const pem = await exportPKCS8(pair.privateKey);
  const sealed = seal(Buffer.from(pem, 'utf8'), kek, `audit:${kid}`);
  const publicJwk: AuditPublicJwk = { kty: 'OKP', crv: 'Ed25519', x: jwk.x, kid, use: 'sig', alg: AUDIT_SIGNING_ALGORITHM };
  return {
    row: {
      kid,
      public_jwk: JSON.stringify(publicJwk),
      kek_id: sealed.kekId,
      private_key_iv: sealed.iv,
      private_key_ciphertext: sealed.ciphertext,
      private_key_tag: sealed.tag,
      created_at: now,
    },
    key: { kid, privateKey: await importPKCS8(pem, AUDIT_SIGNING_ALGORITHM) },
  };
}

async function unseal(row: KeyRow, kek: Uint8Array): Promise<AuditSigningKey> {
  if (!row.kek_id || !row.private_key_iv || !row.private_key_ciphertext || !row.private_key_tag) throw new Error(`audit key ${row.kid} has no private half`);
  const pem = open({ kekId: row.kek_id, iv: row.private_key_iv, ciphertext: row.private_key_ciphertext, tag: row.private_key_tag }, kek, `audit:${row.kid}`);
  return { kid: row.kid, privateKey: await importPKCS8(pem.toString('utf8'), AUDIT_SIGNING_ALGORITHM) };
}

/** Every audit public key ever used, the current one first: /.well-known/audit-keys.json. */
export async function auditKeySet(knex: Knex): Promise<AuditKeySet> {
  const rows = await knex('audit_signing_keys').select<KeyRow[]>('kid', 'public_jwk').orderByRaw('rotated_at DESC NULLS FIRST, created_at DESC, kid');
  return { keys: rows.map((r) => r.public_jwk) };
}

/** The key that signs heads now; the first call on an empty table generates it (two at once agree on one). */
export async function currentAuditKey(knex: Knex, kek: Uint8Array, now = new Date()): Promise<AuditSigningKey> {
  const row = await knex('audit_signing_keys').whereNull('rotated_at').first<KeyRow | undefined>();
  if (row) return unseal(row, kek);
  const generated = await generate(kek, now);
  await knex('audit_signing_keys').insert(generated.row).onConflict().ignore();
  const current = await knex('audit_signing_keys').whereNull('rotated_at').first<KeyRow>();
  return current.kid === generated.key.kid ? generated.key : unseal(current, kek);
}

/**
 * A new key signs heads from now on; the previous one stays in the key set without its private
 * half. The notary picks the new key up at its next head (it reads the current key for each).
 */
export async function rotateAuditKey(knex: Knex, kek: Uint8Array, now = new Date()): Promise<{ kid: string; previousKid: string }> {
  const previous = await currentAuditKey(knex, kek, now); // proves the KEK opens the current key
  const next = await generate(kek, now);
  await knex.transaction(async (trx) => {
    const updated = await trx('audit_signing_keys')
      .where({ kid: previous.kid })
      .whereNull('rotated_at')
      .update({ rotated_at: now, kek_id: null, private_key_iv: null, private_key_ciphertext: null, private_key_tag: null });
    if (updated !== 1) throw new Error(`audit key ${previous.kid} is no longer current: another rotation happened first`);
    await trx('audit_signing_keys').insert(next.row);
  });
  return { kid: next.key.kid, previousKid: previous.kid };
}
